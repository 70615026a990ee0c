//! Exit codes, one named constant each. `docs/cli.md` lists them; a script
//! that drives Chock may rely on every number here.

/// The command did what it was asked.
pub(crate) const SUCCESS: u8 = 0;
/// `chock gate stop-check` refused the call (the hook protocol of most clients).
pub(crate) const HOOK_REFUSED: u8 = 2;
/// `chock sync --check`: some client is missing the stop check or pending trust.
pub(crate) const NOT_WIRED: u8 = 3;
/// The command failed; stderr says what happened and what to do.
pub(crate) const FAILURE: u8 = 1;
/// `chock run`: the session handed itself over (`chock detach`); the work
/// is not over and it is not this process's any more.
pub(crate) const HANDED_OVER: u8 = 8;
/// The command line could not be parsed (clap's own code), or parsed and
/// does not say what to do ([`Usage`]).
pub(crate) const USAGE: u8 = 2;
/// `chock sandbox`: the sandbox could not be built (stderr names the step).
pub(crate) const SANDBOX_FAILED: u8 = 125;
/// `chock sandbox`: the program exists but could not be executed.
pub(crate) const NOT_EXECUTABLE: u8 = 126;
/// `chock sandbox`: the program was not found in the sandbox.
pub(crate) const NOT_FOUND: u8 = 127;

/// A command line clap accepted that still does not say what to do (a
/// missing message, two arguments that cannot go together): printed like
/// any error, and the exit code is [`USAGE`], as for one that does not
/// parse.
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}
