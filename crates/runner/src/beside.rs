//! What a session is given beside its worktree: the project's workspace
//! binds ([`crate::workspace::binds`]) and its devices ([`crate::devices`]).
//! Both are decided once, before the first turn, recorded (a `decision`
//! per bind and per device, then the session's first notices, which say
//! where each bind is and which node each device is), and handed to the
//! session's commands.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use chock_log::event::Notice;
use chock_log::{LogWriter, WriteError};
use chock_policy::Policy;
use chock_tools::Commands;

use crate::devices::{self, SessionDevices, sysfs::Roots};
use crate::judge::decision_event;
use crate::workspace::binds;

/// The binds and devices of one session, decided and recorded.
#[derive(Debug)]
pub(crate) struct Beside {
    binds: Vec<chock_sandbox::Bind>,
    devices: Option<SessionDevices>,
    /// The temp_copy directories, removed when the session ends.
    temporary: Vec<PathBuf>,
}

impl Beside {
    /// Decides the project's binds and devices and records each answer
    /// and the notices. A project that names neither writes nothing.
    pub(crate) fn start(
        policy: &Policy,
        project: &Path,
        workspace: &Path,
        session_dir: &Path,
        writer: &RefCell<LogWriter>,
    ) -> Result<Beside, WriteError> {
        let mut writer = writer.borrow_mut();
        let made = binds::decide(policy, project, workspace, session_dir);
        for verdict in &made.verdicts {
            writer.append(decision_event(verdict, None))?;
        }
        if !made.said.is_empty() {
            writer.append(Notice {
                subject: "workspace".to_owned(),
                text: made.said.join("\n"),
            })?;
        }
        let devices = if policy.named_devices().is_empty() {
            None
        } else {
            let decided = devices::decide(policy, Roots::from_env());
            for verdict in &decided.verdicts {
                writer.append(decision_event(verdict, None))?;
            }
            writer.append(Notice {
                subject: "devices".to_owned(),
                text: decided.said.join("\n"),
            })?;
            Some(decided.devices)
        };
        Ok(Beside {
            binds: made.binds,
            devices,
            temporary: made.temporary,
        })
    }

    /// `commands` with the binds and devices (the devices move to it).
    pub(crate) fn give(&mut self, commands: Commands) -> Commands {
        let commands = commands.with_binds(self.binds.clone());
        match self.devices.take() {
            Some(devices) => commands.with_devices(devices),
            None => commands,
        }
    }

    /// The session has ended (not handed over): its temporary copies go.
    pub(crate) fn end(&self, writer: &mut LogWriter) -> Result<(), WriteError> {
        let failed = binds::remove_temporary(&self.temporary);
        if !failed.is_empty() {
            writer.append(Notice {
                subject: "workspace".to_owned(),
                text: failed.join("\n"),
            })?;
        }
        Ok(())
    }
}
