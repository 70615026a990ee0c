//! The `.devices` block of a project's chock.zon: the USB and serial
//! devices a project wants, each by its identity and never by its path.
//!
//! ```zig
//! .devices = .{
//!     .{ .action = "device.usb.1d50.6018" },
//!     .{ .action = "device.tty.serial.A50285BI" },
//!     .{ .action = "device.tty.0403.6001" },
//! },
//! ```
//!
//! Naming a device here only says the project wants it; a policy rule for
//! the same action is what lets a session reach it (crates/runner,
//! `devices`). The ids are checked the way the NixOS module's type checks
//! them: four lower-case hex digits each, a problem with its line and
//! column otherwise.

use chock_zon::{Span, Value, ValueKind};

use crate::action::Action;
use crate::action::label::{is_label, is_usb_id};
use crate::check::{Walk, items, kind_name};

/// A device by its identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceId {
    /// `device.usb.<vendor>.<product>`: the USB device itself.
    Usb { vendor: u16, product: u16 },
    /// `device.tty.<vendor>.<product>`: a serial adapter with no serial of
    /// its own.
    Tty { vendor: u16, product: u16 },
    /// `device.tty.serial.<serial>`: a serial adapter by its own serial.
    TtySerial(String),
}

impl DeviceId {
    /// The action it is asked under.
    pub fn action(&self) -> Action {
        match self {
            DeviceId::Usb { vendor, product } => Action::device_usb(*vendor, *product),
            DeviceId::Tty { vendor, product } => Action::device_tty(*vendor, *product),
            DeviceId::TtySerial(serial) => {
                Action::device_tty_serial(serial).unwrap_or_else(|_| Action::device_tty(0, 0))
            }
        }
    }

    /// Reads an action name as a device identity, or says what is wrong.
    pub fn parse(name: &str) -> Result<DeviceId, String> {
        let shape = "a device is device.usb.<vendor>.<product>, device.tty.<vendor>.<product> (four lower-case hex digits each, as lsusb prints them) or device.tty.serial.<serial>";
        let parts: Vec<&str> = name.split('.').collect();
        let hex = |s: &str| -> Result<u16, String> {
            if is_usb_id(s) {
                return u16::from_str_radix(s, 16).map_err(|e| e.to_string());
            }
            if s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "{s:?} in {name:?} is not lower case: write {:?}",
                    s.to_ascii_lowercase()
                ));
            }
            Err(format!(
                "{s:?} in {name:?} is not four hex digits: a vendor or product id is written as lsusb prints it, such as 1d50"
            ))
        };
        match parts.as_slice() {
            ["device", "tty", "serial", serial] if is_label(serial) && serial.len() <= 64 => {
                Ok(DeviceId::TtySerial((*serial).to_owned()))
            }
            ["device", "tty", "serial", serial] => Err(format!(
                "{serial:?} in {name:?} cannot be one segment of an action: a serial is 1 to 64 letters, digits, '_' and '-'"
            )),
            ["device", "usb", v, p] => Ok(DeviceId::Usb {
                vendor: hex(v)?,
                product: hex(p)?,
            }),
            ["device", "tty", v, p] => Ok(DeviceId::Tty {
                vendor: hex(v)?,
                product: hex(p)?,
            }),
            _ => Err(format!("{name:?} is not a device: {shape}")),
        }
    }
}

/// One device as the block names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedDevice {
    pub id: DeviceId,
    /// The file, line and column that named it.
    pub origin: String,
}

impl Walk<'_> {
    /// The `.devices` block: a list of `.{ .action = "device...." }`.
    pub(crate) fn devices(&mut self, v: &Value) -> Vec<NamedDevice> {
        let shape = "write .devices = .{ .{ .action = \"device.usb.1d50.6018\" }, }";
        let Some(list) = items(v) else {
            self.problem(
                &v.span,
                format!(".devices holds {}; {shape}", kind_name(&v.kind)),
            );
            return Vec::new();
        };
        let mut seen: Vec<(NamedDevice, Span)> = Vec::new();
        for item in list {
            let Some(device) = self.device(item) else {
                continue;
            };
            if let Some((_, first)) = seen.iter().find(|(d, _)| d.id == device.id) {
                let message = format!(
                    "{} is named twice: the first is at line {}, column {}; keep one",
                    device.id.action(),
                    first.start.line,
                    first.start.column
                );
                self.problem(&item.span, message);
                continue;
            }
            seen.push((device, item.span));
        }
        seen.into_iter().map(|(d, _)| d).collect()
    }

    fn device(&mut self, v: &Value) -> Option<NamedDevice> {
        let shape = "a device is .{ .action = \"device.usb.1d50.6018\" }";
        let ValueKind::Struct(fields) = &v.kind else {
            self.problem(&v.span, format!("{shape}, not {}", kind_name(&v.kind)));
            return None;
        };
        let mut id = None;
        let mut ok = true;
        for f in fields {
            match (f.name.as_str(), &f.value.kind) {
                ("action", ValueKind::String(s)) => match DeviceId::parse(s) {
                    Ok(parsed) => id = Some(parsed),
                    Err(why) => {
                        self.problem(&f.value.span, why);
                        ok = false;
                    }
                },
                ("action", other) => {
                    self.problem(
                        &f.value.span,
                        format!("{shape}: .action is a string, not {}", kind_name(other)),
                    );
                    ok = false;
                }
                (other, _) => {
                    self.problem(
                        &f.name_span,
                        format!("unknown field .{other} in a device: {shape}"),
                    );
                    ok = false;
                }
            }
        }
        if id.is_none() && ok {
            self.problem(&v.span, format!("this device has no .action: {shape}"));
        }
        Some(NamedDevice {
            id: id?,
            origin: self.place(&v.span),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceId;
    use crate::FileKind;
    use crate::check::check_file;

    #[test]
    fn the_three_shapes_are_read_and_spelt_back() {
        let text = ".{ .devices = .{\n.{ .action = \"device.usb.1d50.6018\" },\n.{ .action = \"device.tty.serial.A50285BI\" },\n.{ .action = \"device.tty.0403.6001\" },\n} }";
        let checked = check_file(text, None, FileKind::Project);
        assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        let names: Vec<String> = checked
            .rules
            .devices
            .iter()
            .map(|d| d.id.action().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "device.usb.1d50.6018",
                "device.tty.serial.A50285BI",
                "device.tty.0403.6001"
            ]
        );
        assert_eq!(checked.rules.devices[1].origin, "line 3, column 1");
    }

    #[test]
    fn an_id_in_upper_case_or_of_the_wrong_length_is_refused_at_its_line_and_column() {
        let text = ".{ .devices = .{\n.{ .action = \"device.usb.1D50.6018\" },\n  .{ .action = \"device.usb.1d5.6018\" },\n.{ .action = \"device.usb.1d50\" },\n} }";
        let got: Vec<String> = check_file(text, None, FileKind::Project)
            .problems
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            "2:14: \"1D50\" in \"device.usb.1D50.6018\" is not lower case: write \"1d50\""
        );
        assert!(got[1].starts_with("3:16: \"1d5\" in"), "{got:?}");
        assert!(
            got[2].starts_with("4:14: \"device.usb.1d50\" is not a device"),
            "{got:?}"
        );
    }

    #[test]
    fn a_device_named_twice_is_refused() {
        let text = ".{ .devices = .{ .{ .action = \"device.tty.0403.6001\" }, .{ .action = \"device.tty.0403.6001\" } } }";
        let got = check_file(text, None, FileKind::Project).problems;
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].message.contains("named twice"), "{got:?}");
    }

    #[test]
    fn a_serial_with_a_dot_is_not_one_segment() {
        assert!(DeviceId::parse("device.tty.serial.a.b").is_err());
        assert!(DeviceId::parse("device.tty.serial.a b").is_err());
        assert_eq!(
            DeviceId::parse("device.tty.serial.A5"),
            Ok(DeviceId::TtySerial("A5".into()))
        );
    }
}
