//! Compiling a file's rules once, and running them over one file's
//! content: each grammar parses the content at most once, and its rules'
//! patterns are one query, so the tree is walked once however many rules
//! apply (each match is handed to the rule whose pattern it is).

use chock_policy::{FileGlobs, Measure, Problem, StyleRule};
use tree_sitter::{Node, Query, QueryCursor, StreamingIterator};

use crate::grammar::Grammar;
use crate::reparse::Trees;
use crate::report::{Answer, Report};

/// How many unreadable places a report lists.
const MAX_SYNTAX_ERRORS: usize = 10;

/// The rules of a session or a `chock style check`, compiled.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<Compiled>,
    /// Per grammar, every rule's patterns as one query, and the rule each
    /// pattern belongs to (an index into `rules`).
    queries: Vec<(Grammar, Query, Vec<usize>)>,
    /// The last tree of each file checked, for the next check to reparse
    /// only what changed.
    trees: Trees,
}

#[derive(Debug)]
struct Compiled {
    rule: StyleRule,
    files: FileGlobs,
    grammar: Grammar,
}

/// Why the rules cannot be used: every rule that does not compile, each
/// with its place in the file that holds it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.sentences().join("; "))]
pub struct CompileError {
    /// One per rule: the file that holds it, and the problem at its line
    /// and column (`the style rule <name>: ...`).
    pub problems: Vec<(String, Problem)>,
}

impl CompileError {
    /// Each problem as `<file>:<line>:<column>: the style rule <name> ...`.
    pub fn sentences(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|(file, problem)| format!("{file}:{problem}"))
            .collect()
    }
}

impl Rules {
    /// Compiles `rules`: each one's grammar (its `.language`, else the
    /// extension of its globs), its globs and its query. Every rule that
    /// does not compile is said, not only the first.
    pub fn compile(rules: &[StyleRule]) -> Result<Rules, CompileError> {
        let mut compiled = Vec::new();
        let mut problems = Vec::new();
        // Per grammar: the query text so far, and the owner of each pattern.
        let mut joined: Vec<(Grammar, String, Vec<usize>)> = Vec::new();
        for rule in rules {
            match compile_one(rule) {
                Ok((one, patterns)) => {
                    let at = match joined.iter().position(|(g, _, _)| *g == one.grammar) {
                        Some(at) => at,
                        None => {
                            joined.push((one.grammar, String::new(), Vec::new()));
                            joined.len() - 1
                        }
                    };
                    let (_, text, owners) = &mut joined[at];
                    text.push_str(&rule.query);
                    text.push('\n');
                    owners.extend(std::iter::repeat_n(compiled.len(), patterns));
                    compiled.push(one);
                }
                Err(problem) => problems.push(problem),
            }
        }
        if !problems.is_empty() {
            return Err(CompileError { problems });
        }
        let mut queries = Vec::new();
        for (grammar, text, owners) in joined {
            // Each rule's query compiled alone, so together they do too.
            let query = Query::new(&grammar.language(), &text).map_err(|err| CompileError {
                problems: vec![(
                    "chock.zon".to_owned(),
                    Problem {
                        line: 0,
                        column: 0,
                        message: format!(
                            "the {} style rules do not compile together: {}",
                            grammar.name(),
                            err.message
                        ),
                    },
                )],
            })?;
            queries.push((grammar, query, owners));
        }
        Ok(Rules {
            rules: compiled,
            queries,
            trees: Trees::default(),
        })
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether any rule applies to `path` (relative to the project root).
    pub fn applies(&self, path: &str) -> bool {
        self.rules.iter().any(|r| r.files.matches(path))
    }

    /// Runs every rule that applies to `path` over `content`.
    pub fn check(&self, path: &str, content: &str) -> Report {
        let mut report = Report {
            path: path.to_owned(),
            ..Report::default()
        };
        let applying: Vec<bool> = self.rules.iter().map(|r| r.files.matches(path)).collect();
        // Each match's first capture, as (line, lines spanned), by rule.
        let mut found: Vec<Vec<(u32, u64)>> = vec![Vec::new(); self.rules.len()];
        for (grammar, query, owners) in &self.queries {
            let mine = |i: &usize| applying[*i] && self.rules[*i].grammar == *grammar;
            if !owners.iter().any(mine) {
                continue;
            }
            let Some(tree) = self.trees.parse(*grammar, path, content) else {
                report.unparsed.extend(
                    (0..self.rules.len())
                        .filter(mine)
                        .map(|i| self.rules[i].rule.name.clone()),
                );
                continue;
            };
            if tree.root_node().has_error() {
                report.syntax_errors = syntax_errors(tree.root_node());
            }
            let mut cursor = QueryCursor::new();
            let mut matches = cursor.matches(query, tree.root_node(), content.as_bytes());
            while let Some(m) = matches.next() {
                let owner = owners[m.pattern_index];
                if let (true, Some(capture)) = (applying[owner], m.captures().first()) {
                    found[owner].push((line_of(capture.node), lines_spanned(capture.node)));
                }
            }
        }
        for (i, compiled) in self.rules.iter().enumerate() {
            if applying[i] && !report.unparsed.contains(&compiled.rule.name) {
                report
                    .answers
                    .push(compiled.answer(std::mem::take(&mut found[i])));
            }
        }
        report
    }
}

/// One rule compiled, with how many patterns its query holds.
fn compile_one(rule: &StyleRule) -> Result<(Compiled, usize), (String, Problem)> {
    let at = |place: Option<(usize, usize)>, what: String| {
        let (line, column) = rule.position(place);
        (
            rule.file_name(),
            Problem {
                line,
                column,
                message: format!("the style rule {}: {what}", rule.name),
            },
        )
    };
    let said = |what: String| at(None, what);
    let grammar = match &rule.language {
        Some(name) => Grammar::named(name).ok_or_else(|| {
            said(format!(
                "there is no grammar for the language {name} in this Chock (it parses {}); name one of those, or remove the rule",
                Grammar::names()
            ))
        })?,
        None => {
            let mut found = rule.files.iter().map(|g| Grammar::of_extension(g));
            match found.next().flatten() {
                Some(first) if found.all(|g| g == Some(first)) => first,
                _ => {
                    return Err(said(format!(
                        "its files ({}) do not say one language by their extension; write .language = one of .{}",
                        rule.files.join(", "),
                        Grammar::ALL.map(Grammar::name).join(", .")
                    )));
                }
            }
        }
    };
    let files = FileGlobs::new(&rule.files).map_err(said)?;
    let query = Query::new(&grammar.language(), &rule.query).map_err(|err| {
        at(
            Some((err.row, err.column)),
            format!(
                "its query does not compile: {}; fix the query (docs/style.md shows the format) or remove the rule",
                described(&err, grammar),
            ),
        )
    })?;
    if query.capture_names().is_empty() {
        return Err(said(
            "its query captures nothing; put a capture such as @node after the pattern the rule counts".to_owned(),
        ));
    }
    Ok((
        Compiled {
            rule: rule.clone(),
            files,
            grammar,
        },
        query.pattern_count(),
    ))
}

/// A query error in words: tree-sitter's message is the bare name for
/// most kinds.
fn described(err: &tree_sitter::QueryError, grammar: Grammar) -> String {
    use tree_sitter::QueryErrorKind;
    let what = err.message.trim().trim_matches('"');
    let grammar = grammar.name();
    match err.kind {
        QueryErrorKind::NodeType => format!("the {grammar} grammar has no node type {what}"),
        QueryErrorKind::Field => format!("the {grammar} grammar has no field {what}"),
        QueryErrorKind::Capture => format!("it uses the capture @{what}, which no pattern defines"),
        QueryErrorKind::Structure => {
            format!("the pattern at {what} cannot match in the {grammar} grammar")
        }
        QueryErrorKind::Syntax => format!("a syntax error ({what})"),
        QueryErrorKind::Predicate => format!("a predicate it cannot read ({what})"),
        QueryErrorKind::Language => format!("the grammar cannot be loaded ({what})"),
    }
}

/// The 1-based lines of the first error and missing nodes of a tree.
fn syntax_errors(root: Node<'_>) -> Vec<u32> {
    let mut lines = Vec::new();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if lines.len() >= MAX_SYNTAX_ERRORS {
            break;
        }
        if node.is_error() || node.is_missing() {
            lines.push(line_of(node));
            continue;
        }
        if node.has_error() {
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
}

fn line_of(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row + 1).unwrap_or(u32::MAX)
}

fn lines_spanned(node: Node<'_>) -> u64 {
    let (start, end) = (node.start_position(), node.end_position());
    u64::try_from(end.row - start.row + 1).unwrap_or(u64::MAX)
}

impl Compiled {
    /// The rule's answer from its matches, each as its first capture's
    /// line and the lines it spans.
    fn answer(&self, found: Vec<(u32, u64)>) -> Answer {
        let count = match self.rule.measure {
            Measure::Matches => u64::try_from(found.len()).unwrap_or(u64::MAX),
            Measure::Lines => found.iter().map(|(_, n)| *n).max().unwrap_or(0),
        };
        let mut lines: Vec<(u32, u64)> = match (self.rule.measure, self.rule.max) {
            (Measure::Lines, Some(max)) => found.into_iter().filter(|(_, n)| *n > max).collect(),
            _ => found,
        };
        lines.sort_unstable();
        lines.dedup();
        Answer {
            rule: self.rule.name.clone(),
            place: self.rule.place(None),
            measure: self.rule.measure,
            count,
            max: self.rule.max,
            lines,
            message: self.rule.message.clone(),
        }
    }
}
