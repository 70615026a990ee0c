//! `diff <project directory>\t<session id>\t<byte limit>`: one line, `ok`
//! and a JSON object with the session's diff since its start (cut at the
//! limit on a line boundary), its full size, its files and what an apply
//! would do.

use chock_control::{DiffFile, MAX_REPLY_LINE, Reply, WorkspaceDiff};
use chock_runner::workspace;

use super::workspace::{blocking, caught_up, entry};
use super::{Conn, Shared, VerbError};
use crate::MAX_DIFF;

pub(crate) async fn diff(
    shared: &Shared,
    project: &str,
    session: &str,
    limit: u64,
    conn: &mut Conn,
) -> Result<(), VerbError> {
    let entry = entry(shared, project, session, None)?;
    let limit = usize::try_from(limit.min(MAX_DIFF)).unwrap_or(usize::MAX);
    let json = blocking(shared, move |state| {
        caught_up(state, &entry);
        let text = workspace::diff(state, &entry).map_err(|err| err.to_string())?;
        let files = workspace::diff_files(state, &entry)
            .map_err(|err| err.to_string())?
            .into_iter()
            .map(|stat| DiffFile {
                path: stat.path,
                added: stat.added,
                removed: stat.removed,
            })
            .collect();
        let description = match workspace::prepare(state, &entry) {
            Ok(carry) => match carry.denied() {
                Some(refusal) => refusal.to_string(),
                None => {
                    let mut said = carry.notes.clone();
                    said.push(carry.description.clone());
                    said.join("\n")
                }
            },
            // What an apply would say instead: nothing to apply, say.
            Err(err) => err.to_string(),
        };
        Ok(reply(&text, limit, files, description))
    })
    .await?;
    conn.send(&Reply::Diff(json)).await
}

/// The reply's JSON, the diff cut so the line stays under the client's
/// bound even when escaping makes it longer than the text.
fn reply(text: &str, limit: usize, files: Vec<DiffFile>, description: String) -> String {
    let mut value = WorkspaceDiff {
        diff: String::new(),
        bytes: text.len() as u64,
        truncated: false,
        files,
        description,
    };
    let mut limit = limit;
    loop {
        let cut = cut(text, limit);
        value.truncated = cut.len() < text.len();
        value.diff = cut.to_owned();
        let json = serde_json::to_string(&value).unwrap_or_default();
        if json.len() < MAX_REPLY_LINE || limit == 0 {
            return json;
        }
        limit /= 2;
    }
}

/// At most `limit` bytes of `text`, ending after a newline (or all of it).
fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let head = &text.as_bytes()[..limit];
    match head.iter().rposition(|&b| b == b'\n') {
        Some(at) => &text[..=at],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_cut_after_a_whole_line() {
        let text = "a\nbb\nccc\n";
        assert_eq!(cut(text, 100), text);
        assert_eq!(cut(text, 5), "a\nbb\n");
        assert_eq!(cut(text, 4), "a\n");
        assert_eq!(cut(text, 1), "");
    }
}
