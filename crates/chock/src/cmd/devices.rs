//! `chock devices`: the USB and serial devices on this machine, the action
//! each is asked under, and whether a session of the project would be
//! given it (chock-runner's `devices::list` does the reading).

use std::path::PathBuf;
use std::process::ExitCode;

use chock_policy::Policy;
use chock_runner::devices::{list, sysfs::Roots};
use clap::Args as ClapArgs;

use super::output::{out, outln};
use crate::exit;

/// List the USB and serial devices on this machine and whether a session
/// would be given each.
///
/// Each device is shown with the action it is asked under
/// (device.usb.<vendor>.<product>, device.tty.serial.<serial>,
/// device.tty.<vendor>.<product>), its node, and why a session of the
/// project would or would not be given it: a device is passed in only
/// when the project's chock.zon names it in its .devices block and a rule
/// allows its action (ask refuses: nobody is asked for a device).
/// Devices are read from /sys and /dev ($CHOCK_SYSFS and $CHOCK_DEV move
/// them). docs/devices.md has the rest.
#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// The project directory whose chock.zon is read.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Print a JSON array, one object per device.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let policy = Policy::load(&args.project)?;
    let rows = list::rows(&policy, &Roots::from_env());
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        out!("{}", list::render(&rows));
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
