//! Finding the USB and serial devices on this machine, by identity, from
//! sysfs: what each is called as an action and which node under `/dev` is
//! it.
//!
//! A USB device is a directory of `/sys/bus/usb/devices` with `idVendor`
//! and `idProduct`; its node is the `DEVNAME` of its `uevent`
//! (`bus/usb/001/004`). A serial adapter is an entry of `/sys/class/tty`
//! that has such a USB device among its ancestors; its node is its own
//! `DEVNAME` (`ttyUSB0`), and its identity the ancestor's `serial` when it
//! has a usable one, else the ancestor's ids. These are the attributes the
//! NixOS module's udev rules match (`ATTRS{idVendor}`, `ATTRS{serial}`), so
//! a rule and a block entry name the same device.
//!
//! The node found under `/dev` is taken only when it is a character device
//! whose numbers are the ones sysfs gives (`dev`, `major:minor`): a name
//! under `/dev` that is something else (a leftover file, a link) is not the
//! device, and is reported rather than bound. `CHOCK_SYSFS` and
//! `CHOCK_DEV` move both roots, for a machine whose sysfs is mounted
//! elsewhere and for tests, which build a tree of their own.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use chock_policy::DeviceId;

/// Where sysfs and the device nodes are.
#[derive(Debug, Clone)]
pub struct Roots {
    pub sys: PathBuf,
    pub dev: PathBuf,
}

/// The variables that move the roots.
pub const SYSFS_ENV: &str = "CHOCK_SYSFS";
pub const DEV_ENV: &str = "CHOCK_DEV";

impl Roots {
    /// `/sys` and `/dev`, or where `CHOCK_SYSFS` and `CHOCK_DEV` say.
    pub fn from_env() -> Roots {
        let var = |name: &str, default: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map_or_else(|| PathBuf::from(default), PathBuf::from)
        };
        Roots {
            sys: var(SYSFS_ENV, "/sys"),
            dev: var(DEV_ENV, "/dev"),
        }
    }
}

/// One device found on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Present {
    pub id: DeviceId,
    /// The name under `/dev`, as udev names it (`bus/usb/001/004`,
    /// `ttyUSB0`).
    pub devname: String,
    /// The node on this machine (beneath the dev root), when it is the
    /// device sysfs describes; otherwise why not.
    pub node: Result<PathBuf, String>,
    /// The maker's and product's words, for a person.
    pub label: String,
}

impl Present {
    /// Where the node appears inside the sandbox.
    pub fn inside(&self) -> PathBuf {
        Path::new("/dev").join(&self.devname)
    }
}

/// Which devices a scan reads in full.
#[derive(Debug, Clone, Copy)]
pub struct Want<'a> {
    /// Only these identities (`None`: every device).
    pub ids: Option<&'a [DeviceId]>,
    /// Read the maker's and product's words (`chock devices`).
    pub labels: bool,
}

impl Want<'_> {
    /// Every device, with its words: what `chock devices` lists.
    pub const ALL: Want<'static> = Want {
        ids: None,
        labels: true,
    };

    fn takes(&self, id: &DeviceId) -> bool {
        self.ids.is_none_or(|ids| ids.contains(id))
    }

    fn any(&self, kind: fn(&DeviceId) -> bool) -> bool {
        self.ids.is_none_or(|ids| ids.iter().any(kind))
    }
}

/// Every USB device and USB serial adapter `roots` shows, USB devices
/// first, each in name order.
pub fn scan(roots: &Roots) -> Vec<Present> {
    scan_for(roots, Want::ALL)
}

/// [`scan`] reading only what `want` needs: a session looks at every
/// command's start for its few allowed devices, and skips the USB bus or
/// the ttys when none of them is one, and every other device's node.
pub fn scan_for(roots: &Roots, want: Want<'_>) -> Vec<Present> {
    let mut found = Vec::new();
    if want.any(|id| matches!(id, DeviceId::Usb { .. })) {
        for dir in entries(&roots.sys.join("bus/usb/devices")) {
            let Some((vendor, product)) = usb_ids(&dir) else {
                continue;
            };
            let id = DeviceId::Usb { vendor, product };
            if want.takes(&id)
                && let Some(present) = present(roots, &dir, id, &dir, want.labels)
            {
                found.push(present);
            }
        }
    }
    if !want.any(|id| !matches!(id, DeviceId::Usb { .. })) {
        return found;
    }
    // A tty's directory is found lexically beneath the root as given, so
    // its ancestors are bounded by the same spelling of it.
    let sys = &roots.sys;
    for dir in entries(&roots.sys.join("class/tty")) {
        let Some(dir) = resolve(&dir) else {
            continue;
        };
        let Some(usb) = usb_ancestor(sys, &dir) else {
            continue;
        };
        let Some((vendor, product)) = usb_ids(&usb) else {
            continue;
        };
        let id = match read(&usb.join("serial")) {
            Some(serial) if DeviceId::parse(&format!("device.tty.serial.{serial}")).is_ok() => {
                DeviceId::TtySerial(serial)
            }
            _ => DeviceId::Tty { vendor, product },
        };
        if want.takes(&id)
            && let Some(present) = present(roots, &dir, id, &usb, want.labels)
        {
            found.push(present);
        }
    }
    found
}

/// The entries of a sysfs directory, in name order (links as they are:
/// an attribute is read through one).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    names
}

/// The directory a sysfs entry is, for walking its ancestors: a link's
/// target read once (sysfs links are relative and free of further links),
/// else the entry itself.
fn resolve(entry: &Path) -> Option<PathBuf> {
    match fs::read_link(entry) {
        Ok(target) => {
            let joined = entry.parent()?.join(target);
            // `..` taken lexically: sysfs's own directories are no links.
            let mut out = PathBuf::new();
            for part in joined.components() {
                match part {
                    std::path::Component::ParentDir => {
                        out.pop();
                    }
                    other => out.push(other),
                }
            }
            Some(out)
        }
        Err(_) => Some(entry.to_owned()),
    }
}

/// One attribute's text, trimmed.
fn read(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A USB device's vendor and product, when `dir` is one.
fn usb_ids(dir: &Path) -> Option<(u16, u16)> {
    let hex = |name: &str| {
        let text = read(&dir.join(name))?;
        (text.len() == 4)
            .then(|| u16::from_str_radix(&text, 16).ok())
            .flatten()
    };
    Some((hex("idVendor")?, hex("idProduct")?))
}

/// The nearest ancestor of the tty at `dir` that is a USB device, not
/// leaving `sys`.
fn usb_ancestor(sys: &Path, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(sys) && *a != sys)
        .find(|a| usb_ids(a).is_some())
        .map(Path::to_path_buf)
}

/// The device at sysfs `dir` (whose `uevent` names its node) as `id`,
/// labelled from the USB device at `usb`.
fn present(roots: &Roots, dir: &Path, id: DeviceId, usb: &Path, labels: bool) -> Option<Present> {
    let uevent = fs::read_to_string(dir.join("uevent")).ok()?;
    let devname = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))?
        .trim()
        .to_owned();
    // A name that climbs out of /dev, or is empty, is no node of ours.
    let safe = !devname.is_empty()
        && !devname.starts_with('/')
        && devname
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    if !safe {
        return None;
    }
    let node = check_node(&roots.dev.join(&devname), read(&dir.join("dev")).as_deref());
    let label = if labels {
        [read(&usb.join("manufacturer")), read(&usb.join("product"))]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        String::new()
    };
    Some(Present {
        id,
        devname,
        node,
        label,
    })
}

/// `path` when it is a character device numbered `numbers` (`major:minor`).
fn check_node(path: &Path, numbers: Option<&str>) -> Result<PathBuf, String> {
    let meta = fs::symlink_metadata(path)
        .map_err(|err| format!("{} cannot be read: {err}", path.display()))?;
    if !meta.file_type().is_char_device() {
        return Err(format!("{} is not a character device", path.display()));
    }
    let rdev = meta.rdev();
    let found = format!("{}:{}", rustix::fs::major(rdev), rustix::fs::minor(rdev));
    match numbers {
        Some(want) if want == found => Ok(path.to_owned()),
        Some(want) => Err(format!(
            "{} is device {found}, and sysfs says this device is {want}",
            path.display()
        )),
        None => Err(format!(
            "sysfs gives no device numbers for {}",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use chock_testkit::{FakeDevices, UsbDevice};

    use super::*;

    fn roots(machine: &FakeDevices) -> Roots {
        Roots {
            sys: machine.sys(),
            dev: machine.dev(),
        }
    }

    const ACM: UsbDevice<'static> = UsbDevice {
        port: "1-1",
        ids: ("1d50", "6018"),
        serial: None,
        tty: Some("ttyACM0"),
        like: "/dev/null",
    };

    #[test]
    fn a_usb_serial_adapter_is_found_as_its_usb_device_and_its_tty() {
        let machine = FakeDevices::new();
        machine.plug(&ACM);
        machine.plug(&UsbDevice {
            port: "1-2",
            ids: ("0403", "6001"),
            serial: Some("A50285BI"),
            tty: Some("ttyUSB0"),
            like: "/dev/zero",
        });
        let found = scan(&roots(&machine));
        let names: Vec<(String, String)> = found
            .iter()
            .map(|p| (p.id.action().to_string(), p.devname.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("device.usb.1d50.6018".into(), "bus/usb/001/011".into()),
                ("device.usb.0403.6001".into(), "bus/usb/001/012".into()),
                ("device.tty.1d50.6018".into(), "ttyACM0".into()),
                ("device.tty.serial.A50285BI".into(), "ttyUSB0".into()),
            ]
        );
        assert!(found.iter().all(|p| p.node.is_ok()), "{found:?}");
        assert_eq!(found[0].label, "Test Board");
        assert_eq!(found[3].inside(), Path::new("/dev/ttyUSB0"));
    }

    #[test]
    fn a_node_that_is_not_the_device_sysfs_describes_is_refused() {
        let machine = FakeDevices::new();
        machine.plug(&ACM);
        let node = machine.dev().join("ttyACM0");
        fs::remove_file(&node).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &node).unwrap();
        let tty = |found: Vec<Present>| found.into_iter().find(|p| p.devname == "ttyACM0").unwrap();
        let err = tty(scan(&roots(&machine))).node.unwrap_err();
        assert!(err.ends_with("is not a character device"), "{err}");
        fs::remove_file(&node).unwrap();
        fs::write(&node, "").unwrap();
        let err = tty(scan(&roots(&machine))).node.unwrap_err();
        assert!(err.ends_with("is not a character device"), "{err}");
        fs::remove_file(&node).unwrap();
        let status = std::process::Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "5"])
            .status()
            .unwrap();
        assert!(status.success());
        let err = tty(scan(&roots(&machine))).node.unwrap_err();
        assert!(
            err.contains("is device 1:5, and sysfs says this device is 1:3"),
            "{err}"
        );
    }
}
