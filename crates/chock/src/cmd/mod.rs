//! The subcommands, one file each. `dispatch` is a single exhaustive match:
//! adding a variant to [`Command`] is a compile error until it is handled.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod log;
mod plan;
mod sessions;
mod usage;

#[derive(Debug, Parser)]
#[command(
    name = "chock",
    version,
    about = "Run AI coding agents on Linux with a person in control",
    propagate_version = true
)]
pub(crate) struct Cli {
    /// More diagnostics on stderr (-v info, -vv debug, -vvv trace); CHOCK_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Sessions(sessions::Args),
    Log(log::Args),
    Usage(usage::Args),
    Plan(plan::Args),
}

pub(crate) fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Sessions(args) => sessions::run(args),
        Command::Log(args) => log::run(args),
        Command::Usage(args) => usage::run(args),
        Command::Plan(args) => plan::run(args),
    }
}

/// Columns padded to their widest cell; `right` lists the columns aligned
/// right (numbers). The last column is never padded on the right.
fn render_table<const N: usize>(
    header: &[&str; N],
    rows: &[[String; N]],
    right: &[usize],
) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let head = header.map(str::to_owned);
    for row in std::iter::once(&head).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i] - cell.chars().count();
            if right.contains(&i) {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < N {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Turn the outcome of writing to stdout into "go on" (`true`), "the reader
/// went away" (`false`, as when piped into `head`), or an error.
fn print_result(written: std::io::Result<()>) -> anyhow::Result<bool> {
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}
