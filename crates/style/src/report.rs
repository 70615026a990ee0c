//! What the rules answered for one file, and the sentences a refused write
//! and `chock style check` say with it.

use chock_policy::Measure;

/// How many line numbers a sentence lists before it says how many more.
const MAX_LINES_SAID: usize = 20;

/// One rule's answer for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub rule: String,
    /// Where the rule is written, `<file>:<line>:<column>`.
    pub place: String,
    pub measure: Measure,
    /// The number: matches, or the lines of the longest captured node.
    pub count: u64,
    pub max: Option<u64>,
    /// Each match as its first line and the lines it spans; for a breached
    /// `.lines` rule, only the nodes past the bound.
    pub lines: Vec<(u32, u64)>,
    pub message: Option<String>,
}

impl Answer {
    /// Whether the number is past the rule's bound.
    pub fn breached(&self) -> bool {
        self.max.is_some_and(|max| self.count > max)
    }

    /// `the style rule no_unwrap (chock.zon:4:9): 2 matches, at most 0,
    /// at lines 3, 7: use ? instead`.
    pub fn sentence(&self) -> String {
        let number = match self.measure {
            Measure::Matches => counted(self.count, "match", "matches"),
            Measure::Lines => format!("the longest is {}", counted(self.count, "line", "lines")),
        };
        let bound = self
            .max
            .map_or_else(String::new, |max| format!(", at most {max}"));
        let lines: Vec<String> = self
            .lines
            .iter()
            .take(MAX_LINES_SAID)
            .map(|(line, spans)| match self.measure {
                Measure::Matches => line.to_string(),
                Measure::Lines => format!("{line} ({spans} lines)"),
            })
            .collect();
        let mut text = format!(
            "the style rule {} ({}): {number}{bound}",
            self.rule, self.place
        );
        if !lines.is_empty() {
            text.push_str(&format!(
                ", at line{} {}",
                if self.lines.len() == 1 { "" } else { "s" },
                lines.join(", ")
            ));
            if self.lines.len() > MAX_LINES_SAID {
                text.push_str(&format!(" and {} more", self.lines.len() - MAX_LINES_SAID));
            }
        }
        if let Some(message) = self.message.as_ref().filter(|_| self.breached()) {
            text.push_str(&format!(": {message}"));
        }
        text
    }
}

fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Every applying rule's answer for one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The file, relative to the project root.
    pub path: String,
    pub answers: Vec<Answer>,
    /// The lines where the parser found text it could not read (its error
    /// and missing nodes); the rules ran over the rest.
    pub syntax_errors: Vec<u32>,
    /// Rules whose grammar gave no tree at all (which tree-sitter does
    /// only when it is cancelled): nothing was counted for them.
    pub unparsed: Vec<String>,
}

impl Report {
    /// The answers past their bound.
    pub fn breaches(&self) -> impl Iterator<Item = &Answer> {
        self.answers.iter().filter(|a| a.breached())
    }

    /// Whether the file breaks a rule.
    pub fn breached(&self) -> bool {
        self.breaches().next().is_some()
    }

    /// What the parser could not read, as a sentence, when it found any.
    pub fn syntax_note(&self) -> Option<String> {
        if self.syntax_errors.is_empty() {
            return None;
        }
        let lines: Vec<String> = self.syntax_errors.iter().map(u32::to_string).collect();
        Some(format!(
            "the parser could not read {} at line{} {}, so the style rules counted only what it could read around {}",
            self.path,
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", "),
            if lines.len() == 1 { "it" } else { "them" }
        ))
    }

    /// The result a refused write gets: each rule broken, with its number
    /// and lines, and that the file is unchanged. `None` when no rule is
    /// broken.
    pub fn refusal(&self) -> Option<String> {
        let broken: Vec<String> = self.breaches().map(Answer::sentence).collect();
        if broken.is_empty() {
            return None;
        }
        let mut text = format!(
            "refused: the content would break {} of the project's style rules in {}, so {} on disk is unchanged:\n- {}",
            broken.len(),
            self.path,
            self.path,
            broken.join("\n- ")
        );
        if let Some(note) = self.syntax_note() {
            text.push_str(&format!("\n({note})"));
        }
        text.push_str("\nChange the content so it keeps within each rule, and write it again.");
        Some(text)
    }
}
