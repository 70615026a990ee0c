//! `chock git-credential`: the credential helper git runs inside the
//! sandbox of an approved push. It is the running `chock` binary, bound
//! read-only into that one call's sandbox, because that is a program known
//! to exist and to speak the socket's protocol, whatever the sandbox's
//! `PATH` holds; a script would need an interpreter and a client of its
//! own.
//!
//! It reads what git wrote on its stdin (key=value lines), sends the
//! operation and those lines to the socket, and writes the answer to its
//! stdout for git. It keeps nothing and prints nothing else: a failure is
//! one line on stderr and a non-zero exit, which git treats as "no answer".

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::MAX_MESSAGE;

/// How long the helper waits for the host's answer; above the host's own
/// limit on `git credential`, so a slow answer still arrives.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(40);

/// Why the helper could not ask.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    #[error(
        "cannot reach the push credential socket {path}: {error}; it exists only during an approved git push that Chock runs"
    )]
    Connect {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("talking to the push credential socket {path} failed: {error}")]
    Exchange {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("reading git's request on stdin failed: {0}")]
    Input(std::io::Error),
    #[error("writing the answer for git failed: {0}")]
    Output(std::io::Error),
}

/// Asks `socket` for `op` (`get`, `store`, `erase`) with git's request from
/// `input`, and writes the answer to `output`. An operation git may add
/// later is passed on; the host answers nothing to what it does not know.
pub fn run(
    socket: &Path,
    op: &str,
    input: impl Read,
    mut output: impl Write,
) -> Result<(), HelperError> {
    let mut request = Vec::new();
    input
        .take(MAX_MESSAGE)
        .read_to_end(&mut request)
        .map_err(HelperError::Input)?;
    let mut stream = UnixStream::connect(socket).map_err(|error| HelperError::Connect {
        path: socket.to_owned(),
        error,
    })?;
    let exchange = |error| HelperError::Exchange {
        path: socket.to_owned(),
        error,
    };
    stream
        .set_read_timeout(Some(ANSWER_TIMEOUT))
        .map_err(exchange)?;
    stream
        .write_all(format!("{op}\n").as_bytes())
        .map_err(exchange)?;
    stream.write_all(&request).map_err(exchange)?;
    stream
        .shutdown(std::net::Shutdown::Write)
        .map_err(exchange)?;
    let mut answer = Vec::new();
    stream
        .take(MAX_MESSAGE)
        .read_to_end(&mut answer)
        .map_err(exchange)?;
    output.write_all(&answer).map_err(HelperError::Output)?;
    output.flush().map_err(HelperError::Output)
}
