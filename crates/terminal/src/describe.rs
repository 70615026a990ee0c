//! Each tool call in a few words: the essential argument shown on the
//! call's line, and what it came to, shown under it (a command's exit
//! status with the first and last lines of its output, the count of
//! grep's matches, a file's lines). The words come from the call's
//! arguments and result as the log holds them, so the screen and `chock
//! log` can never disagree about what ran.

use serde_json::Value;

/// Lines of a command's output shown from each end.
const ENDS: usize = 2;

/// The longest argument shown on a call's line, in characters.
const ARGUMENT_CHARS: usize = 120;

/// The essential argument of a call to `tool` with `arguments`: the path,
/// the command line, the pattern, the URL.
#[must_use]
pub fn essential(tool: &str, arguments: &Value) -> String {
    let field = |name: &str| arguments.get(name).and_then(Value::as_str);
    let text = match tool {
        "run_command" => arguments
            .get("command")
            .and_then(Value::as_array)
            .map(|words| command_line(words))
            .map(
                |line| match arguments.get("background").and_then(Value::as_bool) {
                    Some(true) => format!("{line} (in the background)"),
                    _ => line,
                },
            ),
        "grep" => field("pattern").map(|pattern| match field("path") {
            Some(path) => format!("{pattern} in {path}"),
            None => pattern.to_owned(),
        }),
        "glob" => field("pattern").map(str::to_owned),
        "fetch_url" => field("url").map(str::to_owned),
        "web_search" => field("query").map(str::to_owned),
        "set_title" => field("title").map(str::to_owned),
        "ask_user" => field("question").map(str::to_owned),
        "read_skill" => field("name").map(str::to_owned),
        "request_action" => field("action").map(str::to_owned),
        "restrict_self" => field("reason").map(str::to_owned),
        "job_output" | "serve_port" => arguments.get("job").map(scalar),
        "update_plan" => arguments
            .get("items")
            .and_then(Value::as_array)
            .map(|items| format!("{} items", items.len())),
        "read_memory" => Some(String::new()),
        "write_memory" => field("text").map(|t| format!("{} characters", t.chars().count())),
        _ => field("path").map(str::to_owned),
    };
    let text = text.unwrap_or_else(|| compact_json(arguments));
    shorten(&text, ARGUMENT_CHARS)
}

/// A command's words as a shell would read them back.
fn command_line(words: &[Value]) -> String {
    words
        .iter()
        .map(|word| {
            let word = word
                .as_str()
                .map_or_else(|| word.to_string(), str::to_owned);
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                word
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn scalar(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn compact_json(value: &Value) -> String {
    match value {
        Value::Object(map) if map.is_empty() => String::new(),
        other => other.to_string(),
    }
}

/// `text` cut to `max` characters, with an ellipsis when cut.
#[must_use]
pub fn shorten(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    match first.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &first[..cut]),
        None if first.len() < text.trim_end().len() => format!("{first} …"),
        None => first.to_owned(),
    }
}

/// What a call of `tool` came to, in a few lines: `output` is its result
/// as the log holds it.
#[must_use]
pub fn outcome(tool: &str, ok: bool, output: &str) -> Vec<String> {
    if tool == "run_command" {
        return command_outcome(output);
    }
    if !ok {
        return output.lines().take(3).map(|l| shorten(l, 160)).collect();
    }
    let lines = output.lines().count();
    let summary = match tool {
        "grep" if output.starts_with("no line under") => "no matches".to_owned(),
        "grep" => {
            let matches = output
                .lines()
                .filter(|l| !l.starts_with("[more than"))
                .count();
            let more = if output.contains("[more than") {
                "+"
            } else {
                ""
            };
            format!("{matches}{more} matching lines")
        }
        "read_file" | "read_guidance" | "read_skill" | "read_memory" => format!("{lines} lines"),
        "list_directory" | "glob" => format!("{lines} entries"),
        _ => shorten(output, 160),
    };
    vec![summary]
}

/// A command's exit status, then the first and last lines of what it
/// printed (stdout, then stderr), with a count of the lines between.
fn command_outcome(output: &str) -> Vec<String> {
    let mut parts = output.splitn(2, "\n--- stdout ---\n");
    let head = parts.next().unwrap_or("").to_owned();
    let rest = parts.next().unwrap_or("");
    let (stdout, stderr) = rest.split_once("\n--- stderr ---\n").unwrap_or((rest, ""));
    let printed: Vec<&str> = stdout
        .lines()
        .chain(stderr.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut out = vec![head];
    if printed.len() <= 2 * ENDS + 1 {
        out.extend(printed.iter().map(|l| shorten(l, 160)));
    } else {
        out.extend(printed[..ENDS].iter().map(|l| shorten(l, 160)));
        out.push(format!("… {} more lines …", printed.len() - 2 * ENDS));
        out.extend(
            printed[printed.len() - ENDS..]
                .iter()
                .map(|l| shorten(l, 160)),
        );
    }
    out
}

/// One line of a diff: added, removed, or context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Added(String),
    Removed(String),
    Context(String),
    /// Lines left out: how many changed lines were not shown.
    More(usize),
}

/// The lines that differ between `old` and `new`, with one line of
/// context around each change, at most `max` changed lines.
#[must_use]
pub fn diff(old: &str, new: &str, max: usize) -> Vec<DiffLine> {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    let mut shown = 0;
    let mut left = 0;
    for group in diff.grouped_ops(1) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let text = change.value().trim_end_matches('\n').to_owned();
                let tag = change.tag();
                if tag != ChangeTag::Equal {
                    if shown == max {
                        left += 1;
                        continue;
                    }
                    shown += 1;
                } else if shown == max {
                    continue;
                }
                out.push(match tag {
                    ChangeTag::Insert => DiffLine::Added(text),
                    ChangeTag::Delete => DiffLine::Removed(text),
                    ChangeTag::Equal => DiffLine::Context(text),
                });
            }
        }
    }
    if left > 0 {
        out.push(DiffLine::More(left));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_is_named_by_its_essential_argument() {
        let cmd = json!({"command": ["sh", "-c", "echo 'hi there'"]});
        assert_eq!(
            essential("run_command", &cmd),
            r#"sh -c 'echo '\''hi there'\'''"#
        );
        assert_eq!(
            essential("write_file", &json!({"path": "a.txt", "content": "x"})),
            "a.txt"
        );
        assert_eq!(
            essential("grep", &json!({"pattern": "fn main", "path": "src"})),
            "fn main in src"
        );
        assert_eq!(
            essential("update_plan", &json!({"items": [1, 2]})),
            "2 items"
        );
        assert_eq!(essential("some_mcp_tool", &json!({"q": 1})), r#"{"q":1}"#);
    }

    #[test]
    fn a_command_shows_its_status_and_the_ends_of_its_output() {
        let lines: Vec<String> = (1..=9).map(|n| format!("line {n}")).collect();
        let output = format!(
            "exit status: 0\n--- stdout ---\n{}\n--- stderr ---\n",
            lines.join("\n")
        );
        assert_eq!(
            outcome("run_command", true, &output),
            [
                "exit status: 0",
                "line 1",
                "line 2",
                "… 5 more lines …",
                "line 8",
                "line 9"
            ]
        );
        let short = "exit status: 1\n--- stdout ---\n\n--- stderr ---\nno such file";
        assert_eq!(
            outcome("run_command", false, short),
            ["exit status: 1", "no such file"]
        );
    }

    #[test]
    fn grep_is_counted() {
        assert_eq!(
            outcome("grep", true, "a:1:x\nb:2:x\n"),
            ["2 matching lines"]
        );
        assert_eq!(
            outcome("grep", true, "no line under '.' matches 'q'\n"),
            ["no matches"]
        );
    }

    #[test]
    fn a_diff_shows_the_changes_with_context_and_says_what_it_left_out() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nd\ne\nf\n";
        assert_eq!(
            diff(old, new, 2),
            [
                DiffLine::Context("a".into()),
                DiffLine::Removed("b".into()),
                DiffLine::Added("B".into()),
                // Past the bound, neither changes nor their context.
                DiffLine::More(2),
            ]
        );
    }
}
