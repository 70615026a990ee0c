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
/// The command line could not be parsed (clap's own code).
#[expect(
    dead_code,
    reason = "clap exits with this itself; named here for docs/cli.md"
)]
pub(crate) const USAGE: u8 = 2;
