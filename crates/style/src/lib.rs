//! chock-style: a project's style rules, run over the content a write
//! would leave behind.
//!
//! A rule is a tree-sitter query over one grammar; the file's content is
//! parsed with the grammar crate of its language and the query answers a
//! number, how many times it matches (`.measure = .matches`) or the lines
//! of the longest node it captures (`.lines`). A rule with a `.max` is
//! breached past it, and a breach is what refuses a write (the runner) or
//! fails `chock style check` (the binary). Rules are compiled once
//! ([`Rules::compile`]), so a query that does not compile is said at a
//! session's start with its line and column in chock.zon, never at the
//! first write.
//!
//! Queries and grammars rather than regular expressions: a query sees the
//! syntax, so `unwrap` in a comment or a string is not a call, and a
//! function's length is its node's, not a guess at where it ends.
//!
//! A file checked again is reparsed from its last tree (`reparse.rs`), so a
//! session's small edit costs what it changed, not the whole file.
//!
//! A file the grammar cannot read whole still parses: tree-sitter recovers
//! around the broken part with error nodes. The rules run over what it
//! recovered, and the answer says the lines the parser could not read, so
//! a half-written file is checked as far as it can be rather than refused
//! or waved through unread (docs/style.md).
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod files;
mod grammar;
mod reparse;
mod report;
mod rules;

pub use files::Checked;
pub use grammar::Grammar;
pub use report::{Answer, Report};
pub use rules::{CompileError, Rules};

#[cfg(test)]
mod tests;
