//! The last tree of each file a check parsed, so the next check of the same
//! file reparses only what changed: tree-sitter takes the old tree and the
//! byte range that differs, and its cost follows the change rather than the
//! file. A session's edits are small changes to files it checked before,
//! so this is the common case; `chock style check` parses each file once
//! and gains nothing.
//!
//! The range is found by comparing the old content with the new (the
//! common prefix and suffix), so any write, not only an edit, is taken
//! incrementally, and the tree is always of the content it was parsed
//! from, whatever happened on disk in between.

use std::cell::RefCell;

use tree_sitter::{InputEdit, Parser, Point, Tree};

use crate::grammar::Grammar;

/// Files whose last tree is kept.
const KEPT: usize = 64;

/// The kept trees, most recently used last.
#[derive(Debug, Default)]
pub(crate) struct Trees {
    kept: RefCell<Vec<Kept>>,
}

#[derive(Debug)]
struct Kept {
    grammar: Grammar,
    path: String,
    content: String,
    tree: Tree,
}

impl Trees {
    /// The tree of `content`, the file at `path`, in `grammar`.
    pub(crate) fn parse(&self, grammar: Grammar, path: &str, content: &str) -> Option<Tree> {
        let mut parser = Parser::new();
        parser.set_language(&grammar.language()).ok()?;
        let mut kept = self.kept.borrow_mut();
        let before = kept
            .iter()
            .position(|k| k.grammar == grammar && k.path == path)
            .map(|at| kept.remove(at));
        let tree = match before {
            Some(mut old) => {
                old.tree.edit(&edit_between(&old.content, content));
                parser.parse(content, Some(&old.tree))?
            }
            None => parser.parse(content, None)?,
        };
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            grammar,
            path: path.to_owned(),
            content: content.to_owned(),
            tree: tree.clone(),
        });
        Some(tree)
    }
}

/// The edit that turns `old` into `new`: the bytes between their common
/// prefix and common suffix.
fn edit_between(old: &str, new: &str) -> InputEdit {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !old.is_char_boundary(start) || !new.is_char_boundary(start) {
        start -= 1;
    }
    let most = a.len().min(b.len()) - start;
    let mut suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    while !old.is_char_boundary(a.len() - suffix) || !new.is_char_boundary(b.len() - suffix) {
        suffix -= 1;
    }
    InputEdit {
        start_byte: start,
        old_end_byte: a.len() - suffix,
        new_end_byte: b.len() - suffix,
        start_position: point(old, start),
        old_end_position: point(old, a.len() - suffix),
        new_end_position: point(new, b.len() - suffix),
    }
}

/// The row and byte column of `at` in `text`.
fn point(text: &str, at: usize) -> Point {
    let before = &text.as_bytes()[..at];
    let row = before.iter().filter(|b| **b == b'\n').count();
    let column = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(at, |nl| at - nl - 1);
    Point { row, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edit_between_two_texts_is_their_differing_middle() {
        let edit = edit_between("ab\ncd\nef", "ab\ncXd\nef");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (4, 4, 5)
        );
        assert_eq!(edit.start_position, Point { row: 1, column: 1 });
        let same = edit_between("x", "x");
        assert_eq!(
            (same.start_byte, same.old_end_byte, same.new_end_byte),
            (1, 1, 1)
        );
        let grown = edit_between("aa", "aaa");
        assert_eq!(
            (grown.start_byte, grown.old_end_byte, grown.new_end_byte),
            (2, 2, 3)
        );
        let multibyte = edit_between("é1", "è1");
        assert_eq!(multibyte.start_byte, 0);
    }

    #[test]
    fn a_reparse_gives_the_tree_a_fresh_parse_gives() {
        let trees = Trees::default();
        let old = "fn a() { x(); }\nfn b() {}\n";
        let new = "fn a() { x().unwrap(); }\nfn b() {}\nfn c() {}\n";
        trees.parse(Grammar::Rust, "a.rs", old).unwrap();
        let again = trees.parse(Grammar::Rust, "a.rs", new).unwrap();
        let fresh = Trees::default().parse(Grammar::Rust, "a.rs", new).unwrap();
        assert_eq!(again.root_node().to_sexp(), fresh.root_node().to_sexp());
    }
}
