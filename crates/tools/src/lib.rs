//! The tools: file reading and writing confined to the workspace, search,
//! guidance files, the plan and the title, which run in place;
//! run_command, job_output and serve_port, which run through the session's
//! sandbox and its background jobs; the tools that reach past the
//! workspace (the web, the search engine, the project's memory, images),
//! which need the session's [`SessionTools`]; and the session tools
//! (ask_user, restrict_self, request_action), which the session carries out
//! itself. One file per tool, each with a typed argument struct whose doc
//! comments and attributes make the JSON schema for the model; [`ToolName`]
//! dispatches with one exhaustive match, so a new tool is a compile error
//! until it is wired in.
//!
//! A tool never fails the session: a wrong-typed argument, a missing file or
//! a path outside the workspace comes back as an error *result* the model
//! can read and correct, and the loop records it like any other result.

mod ask_user;
mod call;
mod command_git;
mod edit_file;
mod fetch_url;
mod git_shim;
mod glob;
mod grep;
mod job_output;
mod jobs;
mod list_directory;
mod memory;
pub mod net;
mod output;
mod pidfd;
mod push_call;
pub mod push_credential;
mod read_file;
mod read_guidance;
mod read_image;
mod read_memory;
mod request_action;
mod restrict_self;
mod run_command;
mod serve_port;
mod session_tools;
mod set_title;
mod tool;
mod update_plan;
mod walk;
mod web_search;
mod workspace;
mod write_file;
mod write_memory;

pub use ask_user::Args as AskUser;
pub use call::{Call, Decide, External, Local, Source, Unparsed};
pub use command_git::{CommandGit, GitMounts};
pub use memory::memory_file;
pub use output::{Effect, Image, MODEL_LIMIT_CHARS, PlanItem, PlanStatus, ToolOutput, truncate};
pub use request_action::Args as RequestAction;
pub use restrict_self::{Args as RestrictSelf, PromiseRuleArg};
pub use run_command::{Commands, SESSION_ENV};
pub use session_tools::{ImageSupport, SessionTools};
pub use tool::Offered;
pub use web_search::SearchConfig;
pub use workspace::{PathError, Workspace};

use chock_policy::Action;
use chock_providers::ToolSpec;

use crate::tool::Facts;

/// Every tool this module provides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    ReadFile,
    ListDirectory,
    Glob,
    Grep,
    WriteFile,
    EditFile,
    ReadGuidance,
    UpdatePlan,
    SetTitle,
    RunCommand,
    JobOutput,
    ServePort,
    FetchUrl,
    WebSearch,
    ReadImage,
    ReadMemory,
    WriteMemory,
    AskUser,
    RestrictSelf,
    RequestAction,
}

impl ToolName {
    pub const ALL: [Self; 20] = [
        Self::ReadFile,
        Self::ListDirectory,
        Self::Glob,
        Self::Grep,
        Self::WriteFile,
        Self::EditFile,
        Self::ReadGuidance,
        Self::UpdatePlan,
        Self::SetTitle,
        Self::RunCommand,
        Self::JobOutput,
        Self::ServePort,
        Self::FetchUrl,
        Self::WebSearch,
        Self::ReadImage,
        Self::ReadMemory,
        Self::WriteMemory,
        Self::AskUser,
        Self::RestrictSelf,
        Self::RequestAction,
    ];

    /// What the tool's own file says of it.
    fn facts(self) -> Facts {
        match self {
            Self::ReadFile => Facts::of::<read_file::Args>(),
            Self::ListDirectory => Facts::of::<list_directory::Args>(),
            Self::Glob => Facts::of::<glob::Args>(),
            Self::Grep => Facts::of::<grep::Args>(),
            Self::WriteFile => Facts::of::<write_file::Args>(),
            Self::EditFile => Facts::of::<edit_file::Args>(),
            Self::ReadGuidance => Facts::of::<read_guidance::Args>(),
            Self::UpdatePlan => Facts::of::<update_plan::Args>(),
            Self::SetTitle => Facts::of::<set_title::Args>(),
            Self::RunCommand => Facts::of::<run_command::Args>(),
            Self::JobOutput => Facts::of::<job_output::Args>(),
            Self::ServePort => Facts::of::<serve_port::Args>(),
            Self::FetchUrl => Facts::of::<fetch_url::Args>(),
            Self::WebSearch => Facts::of::<web_search::Args>(),
            Self::ReadImage => Facts::of::<read_image::Args>(),
            Self::ReadMemory => Facts::of::<read_memory::Args>(),
            Self::WriteMemory => Facts::of::<write_memory::Args>(),
            Self::AskUser => Facts::of::<ask_user::Args>(),
            Self::RestrictSelf => Facts::of::<restrict_self::Args>(),
            Self::RequestAction => Facts::of::<request_action::Args>(),
        }
    }

    /// The name the model calls the tool by.
    pub fn as_str(self) -> &'static str {
        self.facts().name
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.as_str() == name)
    }

    /// The policy action every call of the tool is decided at, `call.<tool>`,
    /// for the tools that have one; the others are decided where their
    /// arguments say (a command at its program's `exec.*`), or elsewhere
    /// (seeds 004: "decided at a key that fits them better"), or not at all.
    pub fn call_action(self) -> Option<Action> {
        self.facts()
            .at_call
            .then(|| Action::call(self.as_str()).ok())
            .flatten()
    }

    /// Whether the session carries the call out itself (it needs the
    /// approval socket or the session's policy).
    pub fn is_session_tool(self) -> bool {
        self.facts().by_session
    }

    /// The tool described for the model.
    pub fn spec(self) -> ToolSpec {
        let facts = self.facts();
        let (description, parameters) = (facts.schema)();
        ToolSpec {
            name: facts.name.to_owned(),
            description,
            parameters,
        }
    }
}

/// The specs of every tool here, in a stable order.
pub fn specs() -> Vec<ToolSpec> {
    every_spec().to_vec()
}

/// The specs of the tools this session offers, in a stable order
/// (serve_port only where the policy could permit a port).
pub fn specs_for(commands: &Commands) -> Vec<ToolSpec> {
    ToolName::ALL
        .into_iter()
        .zip(every_spec())
        .filter(|(tool, _)| commands.offers(*tool))
        .map(|(_, spec)| spec.clone())
        .collect()
}

/// Every tool's spec in [`ToolName::ALL`]'s order, derived from the argument
/// types once per process.
fn every_spec() -> &'static [ToolSpec] {
    static SPECS: std::sync::OnceLock<Vec<ToolSpec>> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| ToolName::ALL.into_iter().map(ToolName::spec).collect())
}

pub use call::carry_out;

/// Runs one of the in-place tools the model named (for tests and for a
/// person's own use), or answers that there is no such tool or that it
/// needs a session.
pub fn run(name: &str, workspace: &Workspace, arguments: &str) -> ToolOutput {
    match Call::parse(name, arguments) {
        Err(unparsed) => ToolOutput::error(unparsed.error),
        Ok(Call::Local(local)) => local.run(workspace),
        Ok(_) => ToolOutput::error(format!("{name} needs a session; it was not run")),
    }
}

/// A tool call that could not be carried out, worded for the model.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error(
        "the arguments for {tool} are not valid: {detail}. Send a JSON object matching the tool's schema"
    )]
    Arguments { tool: &'static str, detail: String },
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("{0}")]
    Failed(String),
}

/// How a tool that reads one whole file of the workspace bounds it, and what
/// it tells the model to do instead when it will not read it.
struct WholeFile {
    /// Most bytes read.
    max_bytes: u64,
    /// What the tool does with the bytes, for the error: "read_file reads".
    reads: &'static str,
    /// What to do instead with a directory.
    for_directory: &'static str,
    /// What to do instead with a larger file.
    for_large: &'static str,
}

impl WholeFile {
    /// The bytes of the file at `given` (relative to the workspace root),
    /// unless it is a directory, larger than the bound or cannot be read.
    fn read(&self, workspace: &Workspace, given: &str) -> Result<Vec<u8>, ToolError> {
        let path = workspace.resolve(given)?;
        let meta = std::fs::metadata(&path).map_err(|err| io_error("read", given, &err))?;
        if meta.is_dir() {
            return Err(ToolError::Failed(format!(
                "'{given}' is a directory; {}",
                self.for_directory
            )));
        }
        if meta.len() > self.max_bytes {
            return Err(ToolError::Failed(format!(
                "'{given}' is {} bytes, more than {} ({}); {}",
                meta.len(),
                self.reads,
                self.max_bytes,
                self.for_large
            )));
        }
        std::fs::read(&path).map_err(|err| io_error("read", given, &err))
    }
}

/// An I/O failure on `path`, worded for the model.
fn io_error(what: &str, path: &str, err: &std::io::Error) -> ToolError {
    let hint = match err.kind() {
        std::io::ErrorKind::NotFound => "; list_directory or glob shows what exists",
        std::io::ErrorKind::PermissionDenied => "; the file's permissions do not allow it",
        _ => "",
    };
    ToolError::Failed(format!("cannot {what} '{path}': {err}{hint}"))
}
