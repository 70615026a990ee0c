//! The client side of the verbs that act on a session for `chock serve`:
//! carry an ended session on (`continue`), end its turn (`interrupt`),
//! stop the agents of its repository (`stop`), and hand a session the
//! daemon does not own over to it (`detach`).

use std::path::Path;

use super::{Client, ClientError, Started, utf8};
use crate::Request;

impl Client {
    /// Carries an ended session on with `message`, as `chock run --continue
    /// <id> <message>` would: the daemon's child takes the log and runs the
    /// next turn.
    pub async fn continue_session(
        &self,
        project: &Path,
        session: &str,
        message: &str,
    ) -> Result<Started, ClientError> {
        let request = Request::Continue {
            project: utf8(project)?,
            session: session.to_owned(),
            message: message.replace(['\r', '\n'], " "),
        };
        self.started(&request).await
    }

    /// Ends the session's current turn (its process gets SIGINT).
    pub async fn interrupt(&self, project: &Path, session: &str) -> Result<(), ClientError> {
        let request = Request::Interrupt {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.done(&request).await.map(drop)
    }

    /// Stops every agent in the project's repository, as `chock stop`
    /// does, naming `who` as the person who stopped them; the sentence
    /// `chock stop` prints.
    pub async fn stop(
        &self,
        project: &Path,
        who: &str,
        reason: &str,
    ) -> Result<String, ClientError> {
        let request = Request::Stop {
            project: utf8(project)?,
            who: who.replace(['\t', '\r', '\n'], " "),
            reason: reason.replace(['\r', '\n'], " "),
        };
        self.done(&request).await
    }

    /// Hands a session running elsewhere over to the daemon, as `chock
    /// detach <id>` does; the daemon's own child then holds the log.
    pub async fn detach(&self, project: &Path, session: &str) -> Result<Started, ClientError> {
        let request = Request::Detach {
            project: utf8(project)?,
            session: session.to_owned(),
        };
        self.started(&request).await
    }
}
