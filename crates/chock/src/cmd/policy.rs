//! `chock policy`: explain how the policy answers an action, and check a
//! policy file. Both are thin: chock-policy does the reading and the fold.

use super::output::{out, outln};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_policy::{Action, Policy};
use clap::{Args, Subcommand};

use crate::exit;

/// Explain decisions and check policy files.
#[derive(Debug, Args)]
#[command(
    long_about = "Explain how the policy answers an action, and check a policy file.\n\n\
The policy is folded from the org bundle ($CHOCK_ORG_BUNDLE, else /etc/chock/org.zon), \
the operator's config.zon ($XDG_CONFIG_HOME/chock/config.zon), the project's chock.zon and \
the rules Chock ships. docs/policy.md describes every layer and every action name."
)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    Explain(ExplainArgs),
    Check(CheckArgs),
}

/// Show the decision for one action, the rule and layer that decided, the
/// rules that lost and why, and for a refusal or a question the rule to add.
#[derive(Debug, Args)]
#[command(
    after_help = "Action names: call.<tool>, exec.{devshell,nix.store,workspace,path}.<program>, \
exec.unparsed, net.connect.<host>, net.fetch.<host>, net.serve.<port>, web.search, \
skill.read.{operator,project,packaged}, secret.use.<name>, nix.build.<attr>, nix.net.<host>, \
nix.net.build.opaque, git.<subcommand>, lsp.<program>, style.parse, device.usb.<vendor>.<product>, \
device.tty.<vendor>.<product>, device.tty.serial.<serial>, mcp.<server>[.tool.<tool>|.host.<host>], \
plugin.<name>[.tool.<tool>], fs.read, fs.write, provider.<instance>[.<model>], sandbox.jit, \
workspace.{apply,integrate}, workspace.bind.<name>, policy.widen, file.write.\n\
Hosts are written last label first: docs.ziglang.org is net.fetch.org.ziglang.docs.\n\n\
Examples:\n  chock policy explain call.write_file\n  chock policy explain net.fetch.org.ziglang.docs --json\n  \
chock policy explain sandbox.jit --before-first-turn --project ../other"
)]
struct ExplainArgs {
    /// The action name, as a rule writes it (e.g. net.fetch.org.ziglang.docs).
    action: String,
    /// The project directory whose chock.zon is read.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Print one JSON object (action, decision, layer, rule, losers, notes, help).
    #[arg(long)]
    json: bool,
    /// Read the action as a row read before the first turn (model.select,
    /// nix.build, sandbox.jit, an MCP server's rows), where anything but allow refuses.
    #[arg(long)]
    before_first_turn: bool,
}

/// Check a chock.zon, config.zon or org bundle and list every problem with
/// line:column: in its policy and secrets blocks, in the config blocks, and
/// each top-level block Chock does not act on. Exits non-zero when there is
/// any.
#[derive(Debug, Args)]
struct CheckArgs {
    /// The file to check.
    #[arg(value_name = "FILE", default_value = "chock.zon")]
    file: PathBuf,
}

pub(crate) fn run(args: PolicyArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        PolicyCommand::Explain(a) => explain(a),
        PolicyCommand::Check(a) => check(a),
    }
}

fn explain(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let action = Action::parse(&args.action)?;
    let policy = Policy::load(&args.project)?;
    let verdict = if args.before_first_turn {
        policy.decide_before_first_turn(&action)
    } else {
        policy.decide(&action)
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&verdict)?);
    } else {
        out!("{}", verdict.render());
    }
    Ok(ExitCode::SUCCESS)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file).with_context(|| {
        format!(
            "cannot read {}: pass the path of a chock.zon, config.zon or org bundle",
            args.file.display()
        )
    })?;
    let kind = chock_policy::FileKind::of_path(&args.file);
    let mut checked = chock_policy::check_file(&text, Some(&args.file), kind);
    // The runner's blocks (providers, model, search, ...) are validated by
    // the runner's own reading of config.zon, whichever file holds them.
    if checked.problems.is_empty()
        && let Err(err) = chock_zon::from_str::<chock_runner::config::Config>(&text)
    {
        checked.problems.push(chock_policy::Problem {
            line: err.line(),
            column: err.column(),
            message: err.message().to_owned(),
        });
    }
    // A style rule that does not compile would refuse a session at its
    // start; it is a problem of the file here.
    if let Err(err) = chock_style::Rules::compile(&checked.rules.style) {
        checked
            .problems
            .extend(err.problems.into_iter().map(|(_, problem)| problem));
    }
    // A block Chock does not act on is a problem here: the file's author
    // would otherwise believe it applies.
    checked.problems.append(&mut checked.unread);
    checked.problems.sort_by_key(|p| (p.line, p.column));
    let path = args.file.display();
    if checked.problems.is_empty() {
        let n = checked.rules.rules.len();
        outln!(
            "{path}: no problems ({n} rule{})",
            if n == 1 { "" } else { "s" }
        );
        return Ok(ExitCode::SUCCESS);
    }
    for p in &checked.problems {
        outln!("{path}:{p}");
    }
    let n = checked.problems.len();
    eprintln!(
        "chock: {path} has {n} problem{}",
        if n == 1 { "" } else { "s" }
    );
    Ok(ExitCode::from(exit::FAILURE))
}
