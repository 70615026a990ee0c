//! A machine's USB and serial devices as Chock reads them, built in a
//! temporary directory: a sysfs tree (`sys/`) of USB devices with their
//! ids, serials and ttys, and beside it a `dev/` whose nodes are real
//! character devices (made with `mknod`, so the tests that use this need
//! the right to make device nodes) carrying the numbers of a device of
//! this machine the test may open, such as `/dev/null`. Point Chock at it
//! with `CHOCK_SYSFS` and `CHOCK_DEV`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One USB device to add.
#[derive(Debug, Clone)]
pub struct UsbDevice<'a> {
    /// Its port name in sysfs (`1-2`).
    pub port: &'a str,
    /// `idVendor` and `idProduct`, as sysfs prints them.
    pub ids: (&'a str, &'a str),
    /// Its own serial number, when it has one.
    pub serial: Option<&'a str>,
    /// The tty beneath it (`ttyUSB0`), for a serial adapter.
    pub tty: Option<&'a str>,
    /// The device of this machine whose numbers its nodes carry.
    pub like: &'a str,
}

/// A temporary `sys/` and `dev/`.
#[derive(Debug)]
pub struct FakeDevices {
    root: tempfile::TempDir,
}

impl Default for FakeDevices {
    fn default() -> Self {
        Self::new()
    }
}

/// `major:minor` of the device at `path`, as sysfs writes it.
pub fn device_numbers(path: &Path) -> String {
    let rdev = std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .rdev();
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    format!("{major}:{minor}")
}

impl FakeDevices {
    /// An empty machine but for a virtual console (a tty with no USB device
    /// above it, which is no serial adapter).
    pub fn new() -> FakeDevices {
        let devices = FakeDevices {
            root: tempfile::tempdir()
                .unwrap_or_else(|err| panic!("cannot make a temporary directory: {err}")),
        };
        let vt = devices.sys().join("devices/virtual/tty/tty0");
        write(&vt.join("uevent"), "DEVNAME=tty0\n");
        devices.link(&vt, "class/tty/tty0");
        devices
    }

    /// The sysfs root (`CHOCK_SYSFS`).
    pub fn sys(&self) -> PathBuf {
        self.root.path().join("sys")
    }

    /// The device-node root (`CHOCK_DEV`).
    pub fn dev(&self) -> PathBuf {
        self.root.path().join("dev")
    }

    /// The name under `/dev` of the USB device at `port`.
    pub fn usb_devname(port: &str) -> String {
        format!("bus/usb/001/{:0>3}", port.replace('-', ""))
    }

    /// Adds `device`: its sysfs directory, its `/dev/bus/usb` node and its
    /// tty's node.
    pub fn plug(&self, device: &UsbDevice<'_>) {
        let numbers = device_numbers(Path::new(device.like));
        let dir = self.sys().join("devices/pci0000:00/usb1").join(device.port);
        write(&dir.join("idVendor"), &format!("{}\n", device.ids.0));
        write(&dir.join("idProduct"), &format!("{}\n", device.ids.1));
        write(&dir.join("manufacturer"), "Test\n");
        write(&dir.join("product"), "Board\n");
        if let Some(serial) = device.serial {
            write(&dir.join("serial"), &format!("{serial}\n"));
        }
        let usbname = Self::usb_devname(device.port);
        write(
            &dir.join("uevent"),
            &format!("DEVTYPE=usb_device\nDEVNAME={usbname}\n"),
        );
        write(&dir.join("dev"), &format!("{numbers}\n"));
        mknod(&self.dev().join(&usbname), &numbers);
        self.link(&dir, &format!("bus/usb/devices/{}", device.port));
        if let Some(tty) = device.tty {
            let t = dir
                .join(format!("{}:1.0", device.port))
                .join(tty)
                .join("tty")
                .join(tty);
            write(&t.join("uevent"), &format!("DEVNAME={tty}\n"));
            write(&t.join("dev"), &format!("{numbers}\n"));
            mknod(&self.dev().join(tty), &numbers);
            self.link(&t, &format!("class/tty/{tty}"));
        }
    }

    /// Takes the USB device at `port` (and its tty) away, as pulling it
    /// out does.
    pub fn unplug(&self, port: &str, tty: Option<&str>) {
        let _ = std::fs::remove_file(self.sys().join("bus/usb/devices").join(port));
        let _ = std::fs::remove_dir_all(self.sys().join("devices/pci0000:00/usb1").join(port));
        let _ = std::fs::remove_file(self.dev().join(Self::usb_devname(port)));
        if let Some(tty) = tty {
            let _ = std::fs::remove_file(self.sys().join("class/tty").join(tty));
            let _ = std::fs::remove_file(self.dev().join(tty));
        }
    }

    fn link(&self, target: &Path, at: &str) {
        let link = self.sys().join(at);
        parent_of(&link);
        std::os::unix::fs::symlink(target, &link)
            .unwrap_or_else(|err| panic!("cannot link {}: {err}", link.display()));
    }
}

/// Makes the directory `path` goes in.
fn parent_of(path: &Path) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|err| panic!("cannot create {}: {err}", parent.display()));
    }
}

fn write(path: &Path, text: &str) {
    parent_of(path);
    std::fs::write(path, text)
        .unwrap_or_else(|err| panic!("cannot write {}: {err}", path.display()));
}

fn mknod(path: &Path, numbers: &str) {
    parent_of(path);
    let (major, minor) = numbers
        .split_once(':')
        .unwrap_or_else(|| panic!("{numbers:?} is not major:minor"));
    let out = Command::new("mknod")
        .args(["-m", "0666"])
        .arg(path)
        .args(["c", major, minor])
        .output()
        .unwrap_or_else(|e| panic!("cannot run mknod: {e}"));
    assert!(
        out.status.success(),
        "mknod {} (the device tests need the right to make device nodes): {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
