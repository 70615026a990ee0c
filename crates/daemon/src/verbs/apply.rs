//! `apply <project directory>\t<session id>`: the apply `chock workspace
//! apply <id> --yes` makes, decided at the same `workspace.apply` rule (a
//! deny refuses, naming it; an ask is answered by this request), then
//! `ok applied session <id> to <target>`.

use chock_control::Reply;
use chock_runner::workspace;

use super::workspace::{blocking, caught_up, entry};
use super::{Conn, Shared, VerbError};

pub(crate) async fn apply(
    shared: &Shared,
    project: &str,
    session: &str,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let entry = entry(shared, project, session, Some("apply"))?;
    let sentence = blocking(shared, move |state| {
        workspace::require_exists(&entry).map_err(|err| err.to_string())?;
        caught_up(state, &entry);
        let carry = workspace::prepare(state, &entry).map_err(|err| err.to_string())?;
        if let Some(refusal) = carry.denied() {
            return Err(refusal.to_string());
        }
        let mut said = carry.notes.clone();
        let carried = carry.carry_out().map_err(|err| err.to_string())?;
        said.extend(carried.said);
        said.push(carried.sentence);
        Ok(said.join("; "))
    })
    .await?;
    conn.send(&Reply::Done(sentence)).await
}
