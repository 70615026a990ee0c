//! The tools: file reading and writing confined to the workspace, search,
//! guidance files, the plan and the title, which run in place;
//! run_command, job_output and serve_port, which run through the session's
//! sandbox and its background jobs; the tools that reach past the
//! workspace (the web, the search engine, the project's memory, images),
//! which need the session's [`SessionTools`]; and the session tools
//! (ask_user, restrict_self, request_action), which the session carries out
//! itself. One file per tool, each with its JSON schema for the model and a
//! typed argument struct; [`ToolName`] dispatches with one exhaustive match,
//! so a new tool is a compile error until it is wired in.
//!
//! A tool never fails the session: a wrong-typed argument, a missing file or
//! a path outside the workspace comes back as an error *result* the model
//! can read and correct, and the loop records it like any other result.

pub mod agentic_tools;
mod call;
mod command_git;
mod edit_file;
mod fetch_url;
pub mod git_shim;
mod glob;
mod grep;
pub mod jobs;
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
pub mod run_command;
pub mod serve_port;
mod session_tools;
mod set_title;
mod update_plan;
mod walk;
mod web_search;
mod workspace;
mod write_file;
mod write_memory;

use serde::de::DeserializeOwned;

pub use call::{Call, Decide, External, Local, Source, Unparsed};
pub use command_git::{CommandGit, GitMounts};
pub use memory::memory_file;
pub use output::{Effect, Image, MODEL_LIMIT_CHARS, PlanItem, PlanStatus, ToolOutput, truncate};
pub use run_command::Commands;
pub use session_tools::{ImageSupport, SessionTools};
pub use web_search::SearchConfig;
pub use workspace::{PathError, Workspace};

use chock_providers::ToolSpec;

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

    /// The name the model calls the tool by.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadFile => "read_file",
            Self::ListDirectory => "list_directory",
            Self::Glob => "glob",
            Self::Grep => "grep",
            Self::WriteFile => "write_file",
            Self::EditFile => "edit_file",
            Self::ReadGuidance => "read_guidance",
            Self::UpdatePlan => "update_plan",
            Self::SetTitle => "set_title",
            Self::RunCommand => "run_command",
            Self::JobOutput => "job_output",
            Self::ServePort => "serve_port",
            Self::FetchUrl => "fetch_url",
            Self::WebSearch => "web_search",
            Self::ReadImage => "read_image",
            Self::ReadMemory => "read_memory",
            Self::WriteMemory => "write_memory",
            Self::AskUser => "ask_user",
            Self::RestrictSelf => "restrict_self",
            Self::RequestAction => "request_action",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.as_str() == name)
    }

    /// The policy action the call is decided at, `call.<tool>`, for the
    /// tools that have one; the plan and the title are decided elsewhere
    /// (seeds 004: "decided at a key that fits them better").
    pub fn call_action(self) -> Option<String> {
        match self {
            // run_command is decided at its program's exec.* action,
            // serve_port at net.serve.<port>, fetch_url at net.fetch.<host>
            // and web_search at web.search (see SessionTools::action);
            // job_output reads what a call already decided started; the
            // session tools are carried out by the session (asking a
            // person, narrowing, or asking for the action named).
            Self::UpdatePlan
            | Self::SetTitle
            | Self::RunCommand
            | Self::JobOutput
            | Self::ServePort
            | Self::FetchUrl
            | Self::WebSearch
            | Self::AskUser
            | Self::RestrictSelf
            | Self::RequestAction => None,
            Self::ReadFile
            | Self::ListDirectory
            | Self::Glob
            | Self::Grep
            | Self::WriteFile
            | Self::EditFile
            | Self::ReadGuidance
            | Self::ReadImage
            | Self::ReadMemory
            | Self::WriteMemory => Some(format!("call.{}", self.as_str())),
        }
    }

    /// Whether the session carries the call out itself (it needs the
    /// approval socket or the session's policy).
    pub fn is_session_tool(self) -> bool {
        matches!(
            self,
            Self::AskUser | Self::RestrictSelf | Self::RequestAction
        )
    }

    /// The tool described for the model.
    pub fn spec(self) -> ToolSpec {
        let (description, parameters) = match self {
            Self::ReadFile => read_file::schema(),
            Self::ListDirectory => list_directory::schema(),
            Self::Glob => glob::schema(),
            Self::Grep => grep::schema(),
            Self::WriteFile => write_file::schema(),
            Self::EditFile => edit_file::schema(),
            Self::ReadGuidance => read_guidance::schema(),
            Self::UpdatePlan => update_plan::schema(),
            Self::SetTitle => set_title::schema(),
            Self::RunCommand => run_command::schema(),
            Self::JobOutput => jobs::job_output_schema(),
            Self::ServePort => serve_port::schema(),
            Self::FetchUrl => fetch_url::schema(),
            Self::WebSearch => web_search::schema(),
            Self::ReadImage => read_image::schema(),
            Self::ReadMemory => read_memory::schema(),
            Self::WriteMemory => write_memory::schema(),
            Self::AskUser => agentic_tools::ask_user_schema(),
            Self::RestrictSelf => agentic_tools::restrict_self_schema(),
            Self::RequestAction => agentic_tools::request_action_schema(),
        };
        ToolSpec {
            name: self.as_str().to_owned(),
            description: description.to_owned(),
            parameters,
        }
    }
}

/// The specs of every tool here, in a stable order.
pub fn specs() -> Vec<ToolSpec> {
    ToolName::ALL.into_iter().map(ToolName::spec).collect()
}

/// The specs of the tools this session offers, in a stable order
/// (serve_port only where the policy could permit a port).
pub fn specs_for(commands: &Commands) -> Vec<ToolSpec> {
    ToolName::ALL
        .into_iter()
        .filter(|tool| commands.offers(*tool))
        .map(ToolName::spec)
        .collect()
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

/// Parses the model's argument text. An empty string counts as `{}`: some
/// servers send nothing at all for a call without arguments.
fn parse<T: DeserializeOwned>(tool: ToolName, arguments: &str) -> Result<T, ToolError> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    serde_json::from_str(text).map_err(|err| ToolError::Arguments {
        tool: tool.as_str(),
        detail: err.to_string(),
    })
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
