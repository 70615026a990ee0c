//! The devices a session's commands are given. The runner decides which
//! devices a session may reach once, at its start, and finds where each is
//! at every command's start (a board plugged in mid-session is passed to
//! the next command, one pulled out is gone from it); the tools only ask
//! through [`CommandDevices`] and rebuild the sandbox when the answer
//! changes.

use std::fmt::Debug;

use chock_sandbox::DeviceNode;

/// Where the session's devices are now.
pub trait CommandDevices: Debug {
    /// The nodes to pass into the next command, and a sentence for each
    /// device that arrived or left since the last ask.
    fn nodes(&self) -> (Vec<DeviceNode>, Vec<String>);
}
