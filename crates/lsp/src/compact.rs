//! Diagnostics in the form a model reads: one line each,
//! `path:line:column severity message (source)`, most severe first, cut to
//! a bound with how many were left out.

use lsp_types::{Diagnostic, DiagnosticSeverity};

/// The characters of one diagnostic's message (and of its source) kept: a
/// server's text is the sandbox's, and is not let grow a result.
const MAX_MESSAGE: usize = 400;

/// `diagnostics` of the file at `path` (as the model names it), at most
/// `limit` lines.
pub fn compact(path: &str, diagnostics: &[Diagnostic], limit: usize) -> String {
    let mut sorted: Vec<&Diagnostic> = diagnostics.iter().collect();
    sorted.sort_by_key(|d| {
        (
            rank(d.severity),
            d.range.start.line,
            d.range.start.character,
        )
    });
    let mut lines: Vec<String> = sorted
        .iter()
        .take(limit)
        .map(|d| {
            let message = bounded(&d.message);
            let source = d
                .source
                .as_ref()
                .map_or_else(String::new, |s| format!(" ({})", bounded(s)));
            format!(
                "{path}:{}:{} {} {message}{source}",
                d.range.start.line + 1,
                d.range.start.character + 1,
                severity(d.severity),
            )
        })
        .collect();
    if sorted.len() > limit {
        lines.push(format!("... and {} more", sorted.len() - limit));
    }
    lines.join("\n")
}

/// `text` on one line, cut to [`MAX_MESSAGE`] characters.
fn bounded(text: &str) -> String {
    let mut line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_MESSAGE + 1)
        .collect();
    if line.chars().count() > MAX_MESSAGE {
        line = line.chars().take(MAX_MESSAGE).collect();
        line.push_str(" [cut]");
    }
    line
}

fn rank(severity: Option<DiagnosticSeverity>) -> u8 {
    match severity {
        Some(DiagnosticSeverity::ERROR) => 0,
        Some(DiagnosticSeverity::WARNING) => 1,
        Some(DiagnosticSeverity::INFORMATION) => 2,
        Some(DiagnosticSeverity::HINT) => 3,
        _ => 4,
    }
}

fn severity(severity: Option<DiagnosticSeverity>) -> &'static str {
    match severity {
        Some(DiagnosticSeverity::ERROR) => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "note",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn at(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 4), Position::new(line, 5)),
            severity: Some(severity),
            source: Some("pyflakes".to_owned()),
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn errors_come_first_one_line_each_with_one_based_places_and_a_bound() {
        let said = compact(
            "a.py",
            &[
                at(9, DiagnosticSeverity::WARNING, "unused\nimport"),
                at(2, DiagnosticSeverity::ERROR, "undefined name 'x'"),
                at(5, DiagnosticSeverity::HINT, "h"),
            ],
            2,
        );
        assert_eq!(
            said,
            "a.py:3:5 error undefined name 'x' (pyflakes)\na.py:10:5 warning unused import (pyflakes)\n... and 1 more"
        );
        let long = compact(
            "a.py",
            &[at(0, DiagnosticSeverity::ERROR, &"x".repeat(5000))],
            5,
        );
        assert!(long.len() < 450 && long.contains("[cut]"), "{long}");
    }
}
