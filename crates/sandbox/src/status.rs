//! How a sandboxed command ended, as a person reads it: an exit code, or a
//! signal by name. `shell_code` is the number a shell would report
//! (128 + signal), which `chock sandbox` exits with.

use std::fmt;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

impl ExitStatus {
    /// True for exit code 0.
    pub fn success(self) -> bool {
        self == Self::Code(0)
    }

    /// The exit code, when it exited.
    pub fn code(self) -> Option<i32> {
        match self {
            Self::Code(c) => Some(c),
            Self::Signal(_) => None,
        }
    }

    /// The signal, when it was killed by one.
    pub fn signal(self) -> Option<i32> {
        match self {
            Self::Code(_) => None,
            Self::Signal(s) => Some(s),
        }
    }

    /// The status a shell reports: the code, or 128 + the signal.
    pub fn shell_code(self) -> i32 {
        match self {
            Self::Code(c) => c,
            Self::Signal(s) => 128 + s,
        }
    }
}

/// The conventional name of a signal (`SIGKILL`), or `signal N`.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {sig}"),
    };
    name.to_owned()
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(c) => write!(f, "exit status {c}"),
            Self::Signal(s) => write!(f, "killed by {} (exit status {})", signal_name(*s), 128 + s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_reads_by_name_with_the_shell_status() {
        assert_eq!(
            ExitStatus::Signal(9).to_string(),
            "killed by SIGKILL (exit status 137)"
        );
        assert_eq!(ExitStatus::Code(3).shell_code(), 3);
        assert_eq!(signal_name(99), "signal 99");
    }
}
