//! `chock style check`: a project's style rules run over files as a person
//! runs them, for CI. Thin: chock-style compiles the rules and reads the
//! files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_policy::Policy;
use clap::{Args as ClapArgs, Subcommand};

use super::output::outln;
use crate::exit;

/// Run a project's style rules.
#[derive(Debug, ClapArgs)]
#[command(
    long_about = "Run a project's style rules: the .style block of its chock.zon (and of the \
operator's config.zon), each a tree-sitter query over a file's syntax tree that answers a \
number, refusing past its .max. A session checks every write against them when style.parse \
is allow; this command runs them as a person would, whatever style.parse says. docs/style.md \
has the rule format."
)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: StyleCommand,
}

#[derive(Debug, Subcommand)]
enum StyleCommand {
    Check(CheckArgs),
}

/// Check files against the project's style rules: one line per rule
/// broken, with its number and lines. Exits 1 when any file breaks a
/// rule, a rule does not compile, or a file named cannot be read.
#[derive(Debug, ClapArgs)]
#[command(
    after_help = "With no FILES, every file under the project a rule applies to is checked \
(hidden directories, target and node_modules are left out).\n\n\
Examples:\n  chock style check\n  chock style check src/main.rs src/lib.rs\n  chock style check --project ../other"
)]
struct CheckArgs {
    /// The files to check (relative to the current directory).
    #[arg(value_name = "FILES")]
    files: Vec<PathBuf>,
    /// The project directory whose chock.zon holds the rules.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        StyleCommand::Check(args) => check(args),
    }
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let project = args.project.canonicalize().with_context(|| {
        format!(
            "cannot use the project directory {}: give an existing directory with --project",
            args.project.display()
        )
    })?;
    let policy = Policy::load(&project)?;
    if policy.style_rules().is_empty() {
        anyhow::bail!(
            "the project {} holds no style rules: write them in the .style block of its chock.zon (docs/style.md)",
            project.display()
        );
    }
    let rules = chock_style::Rules::compile(policy.style_rules())?;
    let mut broken = 0;
    let mut failed = 0;
    let checked = rules.check_files(&project, &args.files);
    for outcome in &checked {
        match outcome {
            Ok(report) => {
                for answer in report.breaches() {
                    broken += 1;
                    outln!("{}: {}", report.path, answer.sentence());
                }
                if let Some(note) = report.syntax_note() {
                    outln!("{}: note: {note}", report.path);
                }
            }
            Err(why) => {
                failed += 1;
                outln!("{why}");
            }
        }
    }
    outln!(
        "{} file{} checked against {} rule{}: {}",
        checked.len() - failed,
        if checked.len() - failed == 1 { "" } else { "s" },
        rules.len(),
        if rules.len() == 1 { "" } else { "s" },
        match broken {
            0 => "no rule broken".to_owned(),
            1 => "1 rule broken".to_owned(),
            n => format!("{n} rules broken"),
        }
    );
    Ok(ExitCode::from(if broken > 0 || failed > 0 {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }))
}
