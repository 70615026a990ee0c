//! Every built-in tool by name: what each one's file says of it, the specs
//! the model is given, and which a session offers.

use chock_policy::Action;
use chock_providers::ToolSpec;

use crate::nix::{eval as nix_eval, provide as provide_tool};
use crate::run_command::Commands;
use crate::session_tools::SessionTools;
use crate::tool::Facts;
use crate::{
    ask_user, diagnostics, edit_file, fetch_url, glob, grep, job_output, list_directory, read_file,
    read_guidance, read_image, read_memory, read_skill, request_action, restrict_self, run_command,
    serve_port, set_title, spawn_agent, update_plan, web_search, write_file, write_memory,
};

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
    ReadSkill,
    AskUser,
    RestrictSelf,
    RequestAction,
    NixEval,
    ProvideTool,
    SpawnAgent,
    Diagnostics,
}

impl ToolName {
    pub const ALL: [Self; 25] = [
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
        Self::ReadSkill,
        Self::AskUser,
        Self::RestrictSelf,
        Self::RequestAction,
        Self::NixEval,
        Self::ProvideTool,
        Self::SpawnAgent,
        Self::Diagnostics,
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
            Self::ReadSkill => Facts::of::<read_skill::Args>(),
            Self::AskUser => Facts::of::<ask_user::Args>(),
            Self::RestrictSelf => Facts::of::<restrict_self::Args>(),
            Self::RequestAction => Facts::of::<request_action::Args>(),
            Self::NixEval => Facts::of::<nix_eval::Args>(),
            Self::ProvideTool => Facts::of::<provide_tool::Args>(),
            Self::SpawnAgent => Facts::of::<spawn_agent::Args>(),
            Self::Diagnostics => Facts::of::<diagnostics::Args>(),
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

    /// Whether the model is offered `tool` in this session: serve_port only
    /// where some rule could permit a port, read_skill only where there is
    /// a skill to read, nix_eval only where Nix is installed, provide_tool
    /// only where some rule permits a `nix.build`, diagnostics only where a
    /// language server runs.
    pub fn offered(self, commands: &Commands, tools: &SessionTools<'_>) -> bool {
        if !tools.allows(self.as_str()) {
            return false;
        }
        match self {
            ToolName::ServePort => commands.could_serve(),
            ToolName::ReadSkill => !tools.skills().offered.is_empty(),
            ToolName::NixEval => tools.nix().is_some_and(|nix| nix.installed),
            ToolName::ProvideTool => {
                tools.nix().is_some_and(|nix| nix.installed) && tools.could_build()
            }
            ToolName::Diagnostics => tools.lsp().is_some_and(|lsp| !lsp.is_empty()),
            ToolName::ReadFile
            | ToolName::ListDirectory
            | ToolName::Glob
            | ToolName::Grep
            | ToolName::WriteFile
            | ToolName::EditFile
            | ToolName::ReadGuidance
            | ToolName::UpdatePlan
            | ToolName::SetTitle
            | ToolName::RunCommand
            | ToolName::JobOutput
            | ToolName::FetchUrl
            | ToolName::WebSearch
            | ToolName::ReadImage
            | ToolName::ReadMemory
            | ToolName::WriteMemory
            | ToolName::AskUser
            | ToolName::RestrictSelf
            | ToolName::RequestAction => true,
            // Offered where the session can start one (a subagent at the
            // depth limit is not).
            ToolName::SpawnAgent => tools.can_spawn(),
        }
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
/// (serve_port only where the policy could permit a port, read_skill only
/// where the session has a skill).
pub fn specs_for(commands: &Commands, tools: &SessionTools<'_>) -> Vec<ToolSpec> {
    ToolName::ALL
        .into_iter()
        .zip(every_spec())
        .filter(|(tool, _)| tool.offered(commands, tools))
        .map(|(_, spec)| spec.clone())
        .collect()
}

/// Every tool's spec as derived from its argument type, in
/// [`ToolName::ALL`]'s order: what `specs.json` must hold (the tools' test
/// compares them, and writes the file anew when asked).
pub fn derived_specs() -> Vec<ToolSpec> {
    ToolName::ALL.into_iter().map(ToolName::spec).collect()
}

/// The specs the model is sent: `specs.json`, derived from the argument
/// types and checked in, so a session reads one small document instead of
/// running the derivation of twenty schemas before its first request.
fn every_spec() -> &'static [ToolSpec] {
    static SPECS: std::sync::OnceLock<Vec<ToolSpec>> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| {
        // The tools' test parses this very file: a failure here is a build
        // that was never tested.
        let specs: Vec<Stored> = match serde_json::from_str(include_str!("specs.json")) {
            Ok(specs) => specs,
            Err(err) => panic!("specs.json, built into chock, does not parse: {err}"),
        };
        specs
            .into_iter()
            .map(|stored| ToolSpec {
                name: stored.name,
                description: stored.description,
                parameters: stored.parameters,
            })
            .collect()
    })
}

/// One spec as `specs.json` holds it.
#[derive(serde::Deserialize)]
struct Stored {
    name: String,
    description: String,
    parameters: serde_json::Value,
}
