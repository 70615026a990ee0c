//! A write a tool is about to make, before it touches the disk: the file,
//! the whole content it would leave behind, and what the tool says once it
//! is made. write_file and edit_file each make one; the session checks it
//! against the project's style rules, and only then is it committed, so a
//! write a rule refuses leaves the file as it was.
//!
//! A committed write hands back its unified diff with the output, and the
//! session keeps it on the `tool.result` event: a reader of the log (the
//! browser's diff card) shows the change without opening the workspace.

use std::io::Read;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::error::io_error;
use crate::{ToolError, ToolOutput};

/// The largest earlier content read to show what a write changed.
const BEFORE_BYTES: u64 = 1 << 20;
/// The most of a diff a result keeps; past it the diff says how much it
/// left out.
pub(crate) const DIFF_BYTES: usize = 64 << 10;

/// One write, planned.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) path: PathBuf,
    /// The path relative to the workspace root, as the model names it.
    pub(crate) shown: String,
    /// The file's whole content after the write.
    pub(crate) content: String,
    /// What the tool says once the write is made.
    pub(crate) said: String,
    /// What the file held before, when it was a text file small enough to
    /// show: `Some("")` for a new file, `None` when it cannot be shown.
    pub(crate) before: Option<String>,
}

impl Pending {
    /// Makes the write, creating missing parent directories.
    pub(crate) fn commit(&self) -> Result<ToolOutput, ToolError> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|err| io_error("create the directory for", &self.shown, &err))?;
        }
        std::fs::write(&self.path, &self.content)
            .map_err(|err| io_error("write", &self.shown, &err))?;
        let mut output = ToolOutput::ok(self.said.clone());
        output.diff = Some(match &self.before {
            Some(before) => unified(&self.shown, before, &self.content),
            None => format!(
                "(the earlier content of {} is not shown: it was not a text file under {} KiB)\n",
                self.shown,
                BEFORE_BYTES >> 10
            ),
        });
        Ok(output)
    }
}

/// What a file of the workspace holds now, for a diff: `Some("")` when it
/// does not exist, `None` when it is not a regular text file small enough
/// to show. Never follows a link, never opens a FIFO or a device (the
/// workspace is the sandbox's to write).
pub(crate) fn before(path: &Path) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    // A link is refused, and a FIFO does not hang the open.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(String::new()),
        Err(_) => return None,
    };
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > BEFORE_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(BEFORE_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The unified diff from `before` to `after`, headed with the file's path
/// and cut on a line boundary at [`DIFF_BYTES`], with a last line saying
/// how many lines were left out.
pub(crate) fn unified(shown: &str, before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let from = if before.is_empty() {
        "/dev/null".to_owned()
    } else {
        format!("a/{shown}")
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{shown}"))
        .to_string();
    cut(text, DIFF_BYTES)
}

/// `text` cut at the last line boundary within `limit` bytes, with a line
/// saying how many lines were left out.
fn cut(text: String, limit: usize) -> String {
    if text.len() <= limit {
        return text;
    }
    let end = text[..limit].rfind('\n').map_or(0, |at| at + 1);
    let left = text[end..].lines().count();
    format!(
        "{}... ({left} more lines of the diff left out)\n",
        &text[..end]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_names_the_file_and_shows_each_change() {
        let diff = unified("src/a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n");
        assert_eq!(
            diff,
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
    }

    #[test]
    fn a_new_file_is_all_added_lines_from_dev_null() {
        let diff = unified("new.txt", "", "hello\n");
        assert_eq!(
            diff,
            "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"
        );
    }

    #[test]
    fn a_long_diff_is_cut_on_a_line_and_says_how_much_it_left_out() {
        let after: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let diff = unified("big.txt", "", &after);
        assert!(diff.len() <= DIFF_BYTES + 64, "{}", diff.len());
        let last = diff.lines().last().unwrap();
        assert!(last.starts_with("... (") && last.ends_with("more lines of the diff left out)"));
        assert!(diff.lines().rev().nth(1).unwrap().starts_with("+line "));
    }

    #[test]
    fn what_a_file_held_is_never_read_through_a_link_or_a_fifo() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "host secret\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(before(&link), None);
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(before(&fifo), None);
        assert_eq!(before(&dir.path().join("absent")), Some(String::new()));
        assert_eq!(before(&secret).as_deref(), Some("host secret\n"));
    }
}
