//! A helper process that must not outlive the process that started it.
//!
//! `git worktree add`, started by a session to make its workspace, would
//! otherwise carry on after a `kill -9` of the session and leave a checkout
//! and a branch that no log names. The child asks the kernel for SIGKILL
//! when its parent dies (`PR_SET_PDEATHSIG`), and checks that the parent
//! had not already died before it asked.

use std::os::unix::process::CommandExt as _;
use std::process::Command;

/// Makes `command`'s process die with SIGKILL when the thread that spawns
/// it exits (for a single-threaded caller, when the caller dies).
pub fn dies_with_parent(command: &mut Command) -> &mut Command {
    let parent = std::process::id();
    // SAFETY: between fork and exec the closure calls only prctl, getppid
    // and _exit, which are async-signal-safe, and allocates nothing.
    #[expect(unsafe_code, reason = "pre_exec runs between fork and exec")]
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the signal was armed: nobody waits.
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        })
    }
}
