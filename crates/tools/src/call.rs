//! A model's tool call, parsed once: where the turn receives it, the name
//! and the arguments become a [`Call`], one arm per tool with that tool's
//! own typed arguments, or an [`Unparsed`] the model reads. From there on
//! nothing reads the name or the argument text again: the session decides
//! the call from its arm ([`Call::tool`] and the session's `before_tool`)
//! and [`run`] carries it out, each with one exhaustive match, so a new
//! tool is a compile error until both handle it.
//!
//! Tools known only at run time, an MCP server's or a plugin's, are one arm,
//! [`Call::External`], carrying their source and tool name; they are
//! decided at `mcp.<server>.tool.<tool>` and `plugin.<name>.tool.<tool>`.

use chock_policy::Action;

use crate::git_shim::{self, Carry, GitClass};

use super::{
    Commands, SessionTools, ToolError, ToolName, ToolOutput, Workspace, agentic_tools, edit_file,
    fetch_url, glob, grep, jobs, list_directory, parse, read_file, read_guidance, read_image,
    read_memory, run_command, serve_port, set_title, update_plan, web_search, write_file,
    write_memory,
};

/// One tool call with its arguments parsed.
#[derive(Debug)]
pub enum Call {
    /// A tool that runs in place: the workspace is all it needs.
    Local(Local),
    RunCommand(run_command::Args),
    JobOutput(jobs::OutputArgs),
    ServePort(serve_port::Args),
    FetchUrl(fetch_url::Args),
    WebSearch(web_search::Args),
    ReadImage(read_image::Args),
    ReadMemory(read_memory::Args),
    WriteMemory(write_memory::Args),
    AskUser(agentic_tools::AskUser),
    RestrictSelf(agentic_tools::RestrictSelf),
    RequestAction(agentic_tools::RequestAction),
    /// A tool a third party supplies, known only at run time.
    External(External),
}

/// A call of a tool that runs in place.
#[derive(Debug)]
pub enum Local {
    ReadFile(read_file::Args),
    ListDirectory(list_directory::Args),
    Glob(glob::Args),
    Grep(grep::Args),
    WriteFile(write_file::Args),
    EditFile(edit_file::Args),
    ReadGuidance(read_guidance::Args),
    UpdatePlan(update_plan::Args),
    SetTitle(set_title::Args),
}

impl Local {
    fn tool(&self) -> ToolName {
        match self {
            Local::ReadFile(_) => ToolName::ReadFile,
            Local::ListDirectory(_) => ToolName::ListDirectory,
            Local::Glob(_) => ToolName::Glob,
            Local::Grep(_) => ToolName::Grep,
            Local::WriteFile(_) => ToolName::WriteFile,
            Local::EditFile(_) => ToolName::EditFile,
            Local::ReadGuidance(_) => ToolName::ReadGuidance,
            Local::UpdatePlan(_) => ToolName::UpdatePlan,
            Local::SetTitle(_) => ToolName::SetTitle,
        }
    }

    /// Carries the call out in `workspace`.
    pub fn run(self, workspace: &Workspace) -> ToolOutput {
        let result = match self {
            Local::ReadFile(args) => read_file::run(workspace, args),
            Local::ListDirectory(args) => list_directory::run(workspace, args),
            Local::Glob(args) => glob::run(workspace, args),
            Local::Grep(args) => grep::run(workspace, args),
            Local::WriteFile(args) => write_file::run(workspace, args),
            Local::EditFile(args) => edit_file::run(workspace, args),
            Local::ReadGuidance(args) => read_guidance::run(workspace, args),
            Local::UpdatePlan(args) => update_plan::run(args),
            Local::SetTitle(args) => set_title::run(args),
        };
        result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
    }
}

/// A call of a tool known only at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub source: Source,
    /// The tool's name at its source.
    pub tool: String,
    pub arguments: serde_json::Value,
}

/// Where a run-time tool comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// An MCP server, by its name in the configuration.
    Mcp(String),
    /// A plugin, by its name.
    Plugin(String),
}

impl External {
    /// The action the call is decided at.
    pub fn action_name(&self) -> String {
        match &self.source {
            Source::Mcp(server) => format!("mcp.{server}.tool.{}", self.tool),
            Source::Plugin(name) => format!("plugin.{name}.tool.{}", self.tool),
        }
    }
}

/// A call that could not be parsed: the tool it names, when it names one,
/// and what the model reads.
#[derive(Debug)]
pub struct Unparsed {
    pub tool: Option<ToolName>,
    pub error: String,
}

impl Call {
    /// Parses the model's call of `name` with `arguments` (JSON text).
    pub fn parse(name: &str, arguments: &str) -> Result<Call, Unparsed> {
        let Some(tool) = ToolName::parse(name) else {
            return Err(Unparsed {
                tool: None,
                error: format!(
                    "there is no tool named '{name}'; the tools are: {}",
                    ToolName::ALL.map(ToolName::as_str).join(", ")
                ),
            });
        };
        Call::parse_tool(tool, arguments).map_err(|err| Unparsed {
            tool: Some(tool),
            error: err.to_string(),
        })
    }

    fn parse_tool(tool: ToolName, arguments: &str) -> Result<Call, ToolError> {
        Ok(match tool {
            ToolName::ReadFile => Call::Local(Local::ReadFile(parse(tool, arguments)?)),
            ToolName::ListDirectory => Call::Local(Local::ListDirectory(parse(tool, arguments)?)),
            ToolName::Glob => Call::Local(Local::Glob(parse(tool, arguments)?)),
            ToolName::Grep => Call::Local(Local::Grep(parse(tool, arguments)?)),
            ToolName::WriteFile => Call::Local(Local::WriteFile(parse(tool, arguments)?)),
            ToolName::EditFile => Call::Local(Local::EditFile(parse(tool, arguments)?)),
            ToolName::ReadGuidance => Call::Local(Local::ReadGuidance(parse(tool, arguments)?)),
            ToolName::UpdatePlan => Call::Local(Local::UpdatePlan(parse(tool, arguments)?)),
            ToolName::SetTitle => Call::Local(Local::SetTitle(parse(tool, arguments)?)),
            ToolName::RunCommand => Call::RunCommand(run_command::Args::parse(arguments)?),
            ToolName::JobOutput => Call::JobOutput(parse(tool, arguments)?),
            ToolName::ServePort => Call::ServePort(serve_port::Args::parse(arguments)?),
            ToolName::FetchUrl => Call::FetchUrl(parse(tool, arguments)?),
            ToolName::WebSearch => Call::WebSearch(parse(tool, arguments)?),
            ToolName::ReadImage => Call::ReadImage(parse(tool, arguments)?),
            ToolName::ReadMemory => Call::ReadMemory(parse(tool, arguments)?),
            ToolName::WriteMemory => Call::WriteMemory(parse(tool, arguments)?),
            ToolName::AskUser => Call::AskUser(agentic_tools::ask_user(arguments)?),
            ToolName::RestrictSelf => Call::RestrictSelf(agentic_tools::restrict_self(arguments)?),
            ToolName::RequestAction => {
                Call::RequestAction(agentic_tools::request_action(arguments)?)
            }
        })
    }

    /// The built-in tool the call is of (`None` for a run-time tool).
    pub fn tool(&self) -> Option<ToolName> {
        Some(match self {
            Call::Local(local) => local.tool(),
            Call::RunCommand(_) => ToolName::RunCommand,
            Call::JobOutput(_) => ToolName::JobOutput,
            Call::ServePort(_) => ToolName::ServePort,
            Call::FetchUrl(_) => ToolName::FetchUrl,
            Call::WebSearch(_) => ToolName::WebSearch,
            Call::ReadImage(_) => ToolName::ReadImage,
            Call::ReadMemory(_) => ToolName::ReadMemory,
            Call::WriteMemory(_) => ToolName::WriteMemory,
            Call::AskUser(_) => ToolName::AskUser,
            Call::RestrictSelf(_) => ToolName::RestrictSelf,
            Call::RequestAction(_) => ToolName::RequestAction,
            Call::External(_) => return None,
        })
    }
}

/// Where a call is decided before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decide {
    /// Nobody is asked: it reads, or it will say itself why it cannot run.
    Nothing,
    /// At this action.
    At(Action),
    /// At this action, and even when permitted it is not carried out: the
    /// text says what is missing (git fetch and the like).
    NotRun(Action, String),
    /// Not at all: the call names no action it could be decided at (a
    /// run-time tool whose name cannot be one), and is refused with the text.
    Refuse(String),
}

impl Call {
    /// The action the call is decided at. A command is decided at its
    /// program's `exec.*` action, or where the git shim sorts it when its
    /// first word is git; serve_port at `net.serve.<port>` where a rule
    /// could permit one (`could_serve`; otherwise the tool answers);
    /// fetch_url at `net.fetch.<host>`, web_search at `web.search` where an
    /// engine is configured (`can_search`); a run-time tool at its own
    /// name; the plan, the title and job_output at nothing; the session
    /// tools by the session as it carries them out; every other tool at
    /// `call.<tool>`.
    pub fn decided_at(&self, could_serve: bool, can_search: bool) -> Decide {
        let at = |action: Option<Action>| action.map_or(Decide::Nothing, Decide::At);
        match self {
            Call::Local(local) => at(local.tool().call_action().and_then(call_action)),
            Call::RunCommand(args) => match git_shim::classify(&args.command) {
                None => Decide::At(run_command::exec_action(args)),
                // Reading costs what it always did: no question.
                Some(GitClass::ReadOnly { .. }) => Decide::Nothing,
                Some(GitClass::Decide { action, carry }) => match carry {
                    Carry::NotRun(text) => Decide::NotRun(action, text),
                    Carry::Run | Carry::Push => Decide::At(action),
                },
            },
            Call::ServePort(args) if could_serve => at(args.action()),
            Call::ServePort(_) => Decide::Nothing,
            Call::FetchUrl(args) => at(fetch_url::action(args)),
            Call::WebSearch(_) => at(can_search.then(Action::web_search)),
            Call::ReadImage(_) | Call::ReadMemory(_) | Call::WriteMemory(_) => at(self
                .tool()
                .and_then(ToolName::call_action)
                .and_then(call_action)),
            Call::JobOutput(_)
            | Call::AskUser(_)
            | Call::RestrictSelf(_)
            | Call::RequestAction(_) => Decide::Nothing,
            Call::External(external) => match external.action_name().parse() {
                Ok(action) => Decide::At(action),
                Err(err) => Decide::Refuse(format!(
                    "{} is not a name a call can be decided at ({err}); it was not run",
                    external.action_name()
                )),
            },
        }
    }
}

/// `call.<tool>` as an action.
fn call_action(name: String) -> Option<Action> {
    Action::call(name.trim_start_matches("call.")).ok()
}

/// Carries out a decided call: commands through `commands` (the session's
/// sandbox), the tools that reach past the workspace through `session`, the
/// rest in place. The session tools never get here (the session carries
/// them out while it decides them); a run-time tool has no source yet.
pub async fn carry_out(
    call: Call,
    workspace: &Workspace,
    commands: &Commands,
    session: &SessionTools<'_>,
) -> ToolOutput {
    let result = match call {
        Call::Local(local) => Ok(local.run(workspace)),
        Call::RunCommand(args) => Ok(commands.run_args(&args).await),
        Call::JobOutput(args) => Ok(commands.job_output(&args).await),
        Call::ServePort(args) => Ok(commands.serve_port(&args)),
        Call::FetchUrl(args) => Ok(session.fetch(args).await),
        Call::WebSearch(args) => session.search(args).await,
        Call::ReadImage(args) => session.read_image(workspace, args),
        Call::ReadMemory(args) => session.read_memory(args),
        Call::WriteMemory(args) => session.write_memory(args),
        Call::AskUser(_) | Call::RestrictSelf(_) | Call::RequestAction(_) => Err(
            ToolError::Failed("a session tool is carried out by the session itself".to_owned()),
        ),
        Call::External(external) => Err(ToolError::Failed(format!(
            "nothing in this session provides {}",
            external.action_name()
        ))),
    };
    result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_time_tool_is_decided_at_its_source_and_name_or_refused() {
        let call = |source, tool: &str| {
            Call::External(External {
                source,
                tool: tool.to_owned(),
                arguments: serde_json::json!({}),
            })
        };
        let mcp = call(Source::Mcp("time".into()), "get_current_time");
        assert_eq!(
            mcp.decided_at(false, false),
            Decide::At("mcp.time.tool.get_current_time".parse().unwrap())
        );
        let plugin = call(Source::Plugin("hello".into()), "greet");
        assert_eq!(
            plugin.decided_at(false, false),
            Decide::At("plugin.hello.tool.greet".parse().unwrap())
        );
        let bad = call(Source::Mcp("time".into()), "two words");
        assert!(matches!(bad.decided_at(false, false), Decide::Refuse(_)));
        assert_eq!(bad.tool(), None);
    }

    #[test]
    fn a_call_is_parsed_once_into_its_arm_or_an_error_naming_the_tool() {
        let read = Call::parse("read_file", r#"{"path": "a.txt"}"#).unwrap();
        assert_eq!(read.tool(), Some(ToolName::ReadFile));
        assert_eq!(
            read.decided_at(false, false),
            Decide::At(Action::call("read_file").unwrap())
        );
        let unknown = Call::parse("frobnicate", "{}").unwrap_err();
        assert_eq!(unknown.tool, None);
        assert!(unknown.error.contains("no tool named"), "{}", unknown.error);
        let bad = Call::parse("run_command", r#"{"command": []}"#).unwrap_err();
        assert_eq!(bad.tool, Some(ToolName::RunCommand));
        assert!(bad.error.contains("command is empty"), "{}", bad.error);
        let title = Call::parse("set_title", r#"{"title": "t"}"#).unwrap();
        assert_eq!(title.decided_at(false, false), Decide::Nothing);
    }
}
