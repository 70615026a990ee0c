//! `chock completions` and `chock man`: the shell completion scripts and
//! the manual pages, generated from the same clap definition the command
//! line is parsed with, so they name exactly what `chock` takes.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::exit;

/// Print the shell completion script for bash, zsh or fish.
///
/// The script goes to stdout; install it where the shell looks for
/// completions (below), then start a new shell.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Install:
  bash: chock completions bash > ~/.local/share/bash-completion/completions/chock
  zsh:  chock completions zsh > ~/.zfunc/_chock   (fpath+=(~/.zfunc) before compinit in ~/.zshrc)
  fish: chock completions fish > ~/.config/fish/completions/chock.fish")]
pub(crate) struct CompletionsArgs {
    /// The shell the script is for.
    shell: Shell,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Print the manual page, or write every page into a directory.
///
/// Without --dir, chock.1 goes to stdout (read it with `chock man | man -l -`).
/// With --dir, chock.1 and one page per subcommand (chock-run.1,
/// chock-workspace-list.1, ...) are written there, for a directory man
/// searches such as ~/.local/share/man/man1.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write chock.1 and every subcommand's page into this directory (made
    /// if missing) instead of printing chock.1.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// The command line as a person types it.
fn command() -> clap::Command {
    super::Cli::command()
}

pub(crate) fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command(), "chock", &mut script);
    super::output::print_result(std::io::stdout().lock().write_all(&script))?;
    Ok(ExitCode::from(exit::SUCCESS))
}

pub(crate) fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    match args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command())
                .render(&mut page)
                .context("cannot render the manual page")?;
            super::output::print_result(std::io::stdout().lock().write_all(&page))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot make {}", dir.display()))?;
            clap_mangen::generate_to(command(), &dir)
                .with_context(|| format!("cannot write the manual pages in {}", dir.display()))?;
        }
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
