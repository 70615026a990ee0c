//! The rules over real grammars, read from chock.zon text the way a
//! session reads them.

use super::*;

fn rules(style: &str) -> Result<Rules, CompileError> {
    let text = format!(".{{\n    .style = .{{\n{style}\n    }},\n}}\n");
    let checked = chock_policy::check_text(&text, None);
    assert_eq!(checked.problems, vec![], "{text}");
    Rules::compile(&checked.rules.style)
}

const NO_UNWRAP: &str = r#"        .no_unwrap = .{
            .files = .{ "src/**/*.rs" },
            .query = "(call_expression function: (field_expression field: (field_identifier) @m (#eq? @m \"unwrap\")))",
            .max = 0,
            .message = "return the error with ? instead",
        },"#;

#[test]
fn rust_unwrap_is_counted_by_the_syntax_not_the_text() {
    let rules = rules(NO_UNWRAP).unwrap();
    let content = "fn a() {\n    let x = f().unwrap();\n    // unwrap() in a comment\n    let s = \"x.unwrap()\";\n    g().unwrap();\n}\n";
    let report = rules.check("src/lib.rs", content);
    let answer = &report.answers[0];
    assert_eq!(answer.count, 2);
    assert_eq!(answer.lines, vec![(2, 1), (5, 1)]);
    let refusal = report.refusal().unwrap();
    assert!(refusal.contains("no_unwrap"), "{refusal}");
    assert!(
        refusal.contains("2 matches, at most 0, at lines 2, 5"),
        "{refusal}"
    );
    assert!(refusal.contains("return the error with ?"), "{refusal}");
    assert!(
        rules
            .check("src/lib.rs", "fn a() { f()?; }")
            .refusal()
            .is_none()
    );
    assert!(!rules.applies("tests/a.rs"), "outside its files");
}

#[test]
fn a_long_python_function_breaks_a_lines_rule_at_its_line() {
    let rules = rules(
        r#"        .short = .{
            .files = .{ "*.py" },
            .query = "(function_definition) @f",
            .measure = .lines,
            .max = 3,
        },"#,
    )
    .unwrap();
    let content =
        "def short():\n    return 1\n\ndef long():\n    a = 1\n    b = 2\n    return a + b\n";
    let report = rules.check("pkg/mod.py", content);
    let answer = &report.answers[0];
    assert_eq!(answer.count, 4);
    assert_eq!(answer.lines, vec![(4, 4)]);
    assert!(
        answer
            .sentence()
            .contains("the longest is 4 lines, at most 3, at line 4 (4 lines)")
    );
}

#[test]
fn typescript_console_log_and_a_nix_with_are_found() {
    let rules = rules(
        r#"        .no_console = .{
            .files = .{ "*.ts" },
            .query = "(call_expression function: (member_expression object: (identifier) @o property: (property_identifier) @p) (#eq? @o \"console\") (#eq? @p \"log\"))",
            .max = 0,
        },
        .no_with = .{
            .files = .{ "*.nix" },
            .query = "(with_expression) @w",
            .max = 0,
        },"#,
    )
    .unwrap();
    let ts = rules.check(
        "web/a.ts",
        "const x = 1;\nconsole.log(x);\nconsole.error(x);\n",
    );
    assert_eq!(ts.answers.len(), 1);
    assert_eq!(ts.answers[0].count, 1);
    assert_eq!(ts.answers[0].lines, vec![(2, 1)]);
    let nix = rules.check("default.nix", "{ pkgs }:\nwith pkgs; [ hello ]\n");
    assert_eq!(nix.answers[0].count, 1);
    assert!(nix.breached());
}

#[test]
fn a_query_that_does_not_compile_is_said_at_its_line_and_column_with_the_rule() {
    let err = rules(
        r#"        .bad = .{
            .files = .{ "*.rs" },
            .query = "(function_item (no_such_node) @f)",
        },"#,
    )
    .unwrap_err();
    assert_eq!(err.problems.len(), 1);
    let said = &err.sentences()[0];
    // The query's quote is at line 5, column 22; no_such_node is 16
    // characters into the query.
    assert!(
        said.starts_with("chock.zon:5:39: the style rule bad:"),
        "{said}"
    );
    assert!(
        said.contains("does not compile: the rust grammar has no node type no_such_node"),
        "{said}"
    );
}

#[test]
fn a_language_without_a_grammar_and_files_that_name_none_are_refused() {
    let err = rules(
        r#"        .go = .{ .files = .{ "*.go" }, .language = .go, .query = "(x) @x" },
        .mixed = .{ .files = .{ "*.rs", "*.py" }, .query = "(x) @x" },"#,
    )
    .unwrap_err();
    assert_eq!(err.problems.len(), 2, "{err}");
    let said = err.sentences();
    assert!(said[0].contains("no grammar for the language go"), "{err}");
    assert!(
        said[0].contains("rust, python, typescript, tsx, nix"),
        "{err}"
    );
    assert!(said[1].contains("do not say one language"), "{err}");
}

#[test]
fn a_file_the_parser_cannot_read_whole_is_counted_around_the_broken_part_and_says_so() {
    let rules = rules(NO_UNWRAP).unwrap();
    let content = "fn a() {\n    x.unwrap();\n}\nfn b( {\n";
    let report = rules.check("src/lib.rs", content);
    assert_eq!(
        report.answers[0].count, 1,
        "the readable part is still checked"
    );
    assert!(!report.syntax_errors.is_empty());
    let refusal = report.refusal().unwrap();
    assert!(
        refusal.contains("the parser could not read src/lib.rs at line"),
        "{refusal}"
    );
    let clean = rules.check("src/lib.rs", "fn b( {\n");
    assert!(
        clean.refusal().is_none(),
        "broken but within the rule: not refused"
    );
    assert!(clean.syntax_note().is_some());
}

#[test]
fn every_rule_docs_style_md_shows_compiles_and_finds_what_it_says() {
    let doc = include_str!("../../../docs/style.md");
    let start = doc.find("```zig\n").unwrap() + "```zig\n".len();
    let zon = &doc[start..start + doc[start..].find("```").unwrap()];
    let checked = chock_policy::check_text(zon, None);
    assert_eq!(checked.problems, vec![]);
    assert_eq!(checked.rules.style.len(), 7);
    let rules = Rules::compile(&checked.rules.style).unwrap();
    let count = |path: &str, text: &str| -> Vec<(String, u64)> {
        rules
            .check(path, text)
            .answers
            .into_iter()
            .map(|a| (a.rule, a.count))
            .collect()
    };
    assert_eq!(
        count("pkg/a/m.py", "def f():\n    print(1)\n"),
        [("no_print".to_owned(), 1)]
    );
    assert_eq!(
        count("src/a.ts", "console.log(1);\nlet x: any = 2;\n"),
        [("no_console_log".to_owned(), 1), ("no_any".to_owned(), 1)]
    );
    assert_eq!(
        count(
            "default.nix",
            "with import <nixpkgs> {}; builtins.fetchTarball \"u\"\n"
        ),
        [
            ("no_with".to_owned(), 1),
            ("no_fetch_tarball".to_owned(), 1)
        ]
    );
    assert_eq!(
        count("src/lib.rs", "fn a() { b().unwrap(); }\n"),
        [
            ("no_unwrap".to_owned(), 1),
            ("short_functions".to_owned(), 1)
        ]
    );
}
