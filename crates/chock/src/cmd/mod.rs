//! The subcommands, one file each. `dispatch` is a single exhaustive match:
//! adding a variant to [`Command`] is a compile error until it is handled.

mod approve;
mod completions;
mod daemon;
mod decisions;
mod detach;
mod devices;
pub(crate) mod gate;
mod gateway;
mod git_credential;
mod log;
mod output;
mod plan;
mod policy;
mod resume;
mod run;
pub(crate) mod sandbox;
mod sandbox_net;
mod serve;
mod sessions;
mod skills;
mod ssh_connect;
mod stop;
mod style;
mod sync;
mod usage;
mod workspace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    // Each variant's help is its Args struct's doc comment, or its own where
    // two share one: the first line for the list, the rest for `--help`.
    Stop(stop::StopArgs),
    Resume(resume::ResumeArgs),
    Sync(sync::SyncArgs),
    #[command(hide = true)]
    Gate(gate::GateArgs),
    Gateway(gateway::GatewayArgs),
    Decisions(decisions::DecisionsArgs),
    Daemon(daemon::DaemonArgs),
    Sessions(sessions::Args),
    Log(log::Args),
    /// Show the tokens a session used: one row per model call, then the total.
    Usage(output::OfSession),
    /// Show a session's plan and where each item stands.
    ///
    /// Marks: `[x]` done, `[~]` in progress, `[ ]` pending, `[?]` a status this
    /// version does not know.
    Plan(output::OfSession),
    Sandbox(sandbox::Args),
    /// Explain how the policy answers an action, and check policy files.
    Policy(policy::PolicyArgs),
    Skills(skills::Args),
    Style(style::Args),
    Run(run::Args),
    Serve(serve::ServeArgs),
    Workspace(workspace::Args),
    Approve(approve::Args),
    Detach(detach::Args),
    Devices(devices::Args),
    #[command(hide = true, name = "git-credential")]
    GitCredential(git_credential::Args),
    #[command(hide = true, name = "ssh-connect")]
    SshConnect(ssh_connect::Args),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
}

pub(crate) fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Stop(args) => stop::run(args),
        Command::Resume(args) => resume::run(args),
        Command::Sync(args) => sync::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Gateway(args) => gateway::run(args),
        Command::Decisions(args) => decisions::run(args),
        Command::Daemon(args) => daemon::run(args),
        Command::Sessions(args) => sessions::run(args),
        Command::Log(args) => log::run(args),
        Command::Usage(args) => usage::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Sandbox(args) => sandbox::run(args),
        Command::Policy(args) => policy::run(args),
        Command::Skills(args) => skills::run(args),
        Command::Style(args) => style::run(args),
        Command::Run(args) => run::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Workspace(args) => workspace::run(args),
        Command::Approve(args) => approve::run(args),
        Command::Detach(args) => detach::run(args),
        Command::Devices(args) => devices::run(args),
        Command::GitCredential(args) => git_credential::run(args),
        Command::SshConnect(args) => ssh_connect::run(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    }
}
