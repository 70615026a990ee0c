//! The tools: file reading and writing confined to the workspace, search,
//! guidance files, the plan and the title, which run in place;
//! run_command, job_output and serve_port, which run through the session's
//! sandbox and its background jobs; the tools that reach past the
//! workspace (the web, the search engine, the project's memory, images),
//! which need the session's [`SessionTools`]; and the session tools
//! (ask_user, restrict_self, request_action), which the session carries out
//! itself. A write (write_file, edit_file) is planned first and made
//! through the session's [`SessionTools`], which holds it to the project's
//! style rules and tells the language servers (`lsp.rs`) of it; their
//! diagnostics are also what the diagnostics tool reads. One file per tool, each with a typed argument struct whose doc
//! comments and attributes make the JSON schema for the model; [`ToolName`]
//! (`registry.rs`) dispatches with one exhaustive match, so a new tool is a compile error
//! until it is wired in.
//!
//! A tool never fails the session: a wrong-typed argument, a missing file or
//! a path outside the workspace comes back as an error *result* the model
//! can read and correct, and the loop records it like any other result.

pub mod agents;
mod ask_user;
mod call;
mod command_devices;
mod command_git;
mod diagnostics;
mod edit_file;
mod error;
mod fetch_url;
mod git_shim;
mod glob;
mod grep;
mod job_output;
mod jobs;
mod list_directory;
mod lsp;
mod mcp;
mod memory;
pub mod net;
pub mod nix;
mod output;
mod pidfd;
pub mod plugins;
mod push_call;
pub mod push_credential;
mod read_file;
mod read_guidance;
mod read_image;
mod read_memory;
mod read_skill;
mod registry;
mod request_action;
mod restrict_self;
mod run_command;
mod serve_port;
mod server_process;
mod session_tools;
mod set_title;
pub mod skills;
mod source;
mod spawn_agent;
mod tool;
mod update_plan;
mod walk;
mod web_search;
mod workspace;
mod write;
mod write_file;
mod write_memory;

pub use ask_user::Args as AskUser;
pub use call::{Call, External, Local, Source, Unparsed, carry_out, run};
pub use command_devices::CommandDevices;
pub use command_git::{CommandGit, GitMounts};
pub use error::ToolError;
pub use lsp::{LspServers, StartedLsp, start as start_lsp};
pub use mcp::{
    McpTools, OfferReport, Started as StartedServer, model_name as mcp_model_name,
    server_env as mcp_server_env, start_local as start_local_mcp, start_remote as start_remote_mcp,
};
pub use memory::memory_file;
pub use nix::{DevShell, DevShellConfig, DevShellError, NixTools, Programs};
pub use output::{Effect, Image, MODEL_LIMIT_CHARS, PlanItem, PlanStatus, ToolOutput, truncate};
pub use read_guidance::GUIDANCE_FILES;
pub use registry::{ToolName, derived_specs, specs, specs_for};
pub use request_action::Args as RequestAction;
pub use restrict_self::{Args as RestrictSelf, PromiseRuleArg};
pub use run_command::{Commands, SESSION_ENV};
pub use session_tools::{ImageSupport, SessionTools};
pub use skills::{Skill, SkillDirs, Skills};
pub use spawn_agent::{Args as SpawnAgent, MAX_TASK};
pub use tool::{Decide, Offered};
pub use web_search::SearchConfig;
pub use workspace::{PathError, SANDBOX_ROOT, Workspace};
