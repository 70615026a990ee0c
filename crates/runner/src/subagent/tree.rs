//! A tree of sessions as the state directory holds it: each session's row
//! names its parent, so a listing is all it takes to find a session's root,
//! its depth, its descendants and what they spent. The logs stay the truth;
//! this reads them through the same listing `chock sessions` uses.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;

use chock_log::event::{EndReason, SessionEnd};
use chock_log::fold::Message;
use chock_log::{LogWriter, SessionId, SessionRow, StateDir, Status, fold_log, list_sessions};

/// One session of a tree, with what it spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub id: String,
    /// Levels below the tree's first session.
    pub depth: usize,
    pub row: SessionRow,
}

/// A session and every session below it, in the order of a walk from the
/// top (each child right after its parent, oldest first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeUsage {
    pub rows: Vec<TreeRow>,
}

impl TreeUsage {
    /// Tokens sent and produced by every session of the tree.
    pub fn total(&self) -> (u64, u64) {
        self.rows.iter().fold((0, 0), |(i, o), r| {
            (i + r.row.input_tokens, o + r.row.output_tokens)
        })
    }
}

/// Every session of the state directory by id, from one listing.
fn rows(state: &StateDir) -> BTreeMap<String, SessionRow> {
    let mut locks = chock_log::LazyLocks::default();
    list_sessions(state, None)
        .sessions
        .into_iter()
        .map(|listed| {
            let row = listed.into_row(&mut locks);
            (row.id.clone(), row)
        })
        .collect()
}

/// `top` and every session below it.
pub fn tree_usage(state: &StateDir, top: &SessionId) -> TreeUsage {
    walk(&rows(state), top.as_str())
}

fn walk(rows: &BTreeMap<String, SessionRow>, top: &str) -> TreeUsage {
    let mut children: BTreeMap<&str, Vec<&SessionRow>> = BTreeMap::new();
    for row in rows.values() {
        if let Some(parent) = &row.parent {
            children.entry(parent.as_str()).or_default().push(row);
        }
    }
    for list in children.values_mut() {
        list.sort_by_key(|r| r.started_at);
    }
    let mut out = TreeUsage::default();
    let Some(first) = rows.get(top) else {
        return out;
    };
    let mut stack = vec![(first, 0)];
    while let Some((row, depth)) = stack.pop() {
        out.rows.push(TreeRow {
            id: row.id.clone(),
            depth,
            row: row.clone(),
        });
        // Seen twice would be a cycle, which only a forged log could make.
        for child in children.get(row.id.as_str()).into_iter().flatten().rev() {
            if out.rows.iter().all(|r| r.id != child.id) {
                stack.push((child, depth + 1));
            }
        }
    }
    out
}

/// A session's place in its tree: levels above it, and what the whole
/// tree from its top has spent.
pub(crate) fn place(state: &StateDir, id: &SessionId) -> (usize, u64) {
    let rows = rows(state);
    let mut top = id.as_str().to_owned();
    let mut depth = 0;
    while let Some(parent) = rows.get(&top).and_then(|r| r.parent.clone()) {
        if depth > rows.len() {
            break;
        }
        top = parent;
        depth += 1;
    }
    let (input, output) = walk(&rows, &top).total();
    (depth, input + output)
}

/// How a child ended, as its parent reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ended {
    pub(crate) reason: EndReason,
    pub(crate) detail: String,
    /// Its last answer.
    pub(crate) answer: String,
    /// Its tokens and its own subagents'.
    pub(crate) tokens: u64,
}

/// Reads how child `id` ended once its process exited with `status`. A
/// child whose log holds no ending died without writing one (a signal, a
/// crash): its parent takes the log, free now, and ends it `crashed`.
pub(crate) fn ended(
    state: &StateDir,
    parent: &SessionId,
    id: &SessionId,
    status: ExitStatus,
) -> Ended {
    let log = state.log_path(id);
    let how = match status.signal() {
        Some(signal) => format!("its process was killed by signal {signal}"),
        None => format!("its process exited with {status}"),
    };
    let Ok(folded) = fold_log(&log) else {
        return Ended {
            reason: EndReason::Crashed,
            detail: format!(
                "{how} before it wrote its log (see {})",
                stderr_path(state, parent, id).display()
            ),
            answer: String::new(),
            tokens: 0,
        };
    };
    let answer = folded
        .state
        .conversation
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant { text, .. } if !text.trim().is_empty() => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let (reason, detail) = match folded.state.status {
        Status::Ended { reason, detail } => (reason, detail),
        _ => {
            let detail = format!("{how} before the session ended; recorded by its parent");
            record_crash(&log, &detail);
            (EndReason::Crashed, detail)
        }
    };
    let (input, output) = tree_usage(state, id).total();
    Ended {
        reason,
        detail,
        answer,
        tokens: input + output,
    }
}

/// Ends a dead child's log `crashed`; a log somebody holds again (a
/// `chock run --continue` of it) is left to them.
fn record_crash(log: &Path, detail: &str) {
    if let Ok(mut writer) = LogWriter::open(log) {
        let _ = writer.append(SessionEnd {
            reason: EndReason::Crashed,
            detail: detail.to_owned(),
        });
    }
}

/// Where a child's stderr goes when nobody's terminal shows it: beside its
/// parent's log (the child's own directory is made by its log, and a
/// directory without one reads as a broken session to every listing).
pub(crate) fn stderr_path(
    state: &StateDir,
    parent: &SessionId,
    child: &SessionId,
) -> std::path::PathBuf {
    state
        .session_dir(parent)
        .join(format!("subagent-{}.stderr", child.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, parent: Option<&str>, tokens: u64) -> (String, SessionRow) {
        (
            id.to_owned(),
            SessionRow {
                id: id.to_owned(),
                parent: parent.map(str::to_owned),
                input_tokens: tokens,
                output_tokens: 1,
                ..SessionRow::default()
            },
        )
    }

    #[test]
    fn a_tree_is_walked_from_its_top_with_each_child_under_its_parent() {
        let rows: BTreeMap<_, _> = [
            row("a", None, 10),
            row("b", Some("a"), 20),
            row("c", Some("b"), 30),
            row("d", Some("a"), 40),
            row("x", None, 99),
        ]
        .into_iter()
        .collect();
        let tree = walk(&rows, "a");
        let order: Vec<(&str, usize)> =
            tree.rows.iter().map(|r| (r.id.as_str(), r.depth)).collect();
        assert_eq!(order, [("a", 0), ("b", 1), ("c", 2), ("d", 1)]);
        assert_eq!(tree.total(), (100, 4));
    }
}
