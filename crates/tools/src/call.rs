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

use crate::tool::{Decide, Offered, Tool, arguments};
use crate::write::Pending;
use crate::{
    Commands, SessionTools, ToolError, ToolName, ToolOutput, Workspace, ask_user, diagnostics,
    edit_file, fetch_url, glob, grep, job_output, list_directory, read_file, read_guidance,
    read_image, read_memory, read_skill, request_action, restrict_self, run_command, serve_port,
    set_title, spawn_agent, update_plan, web_search, write_file, write_memory,
};

/// One tool call with its arguments parsed.
#[derive(Debug)]
pub enum Call {
    /// A tool that runs in place: the workspace is all it needs.
    Local(Local),
    RunCommand(run_command::Args),
    JobOutput(job_output::Args),
    ServePort(serve_port::Args),
    FetchUrl(fetch_url::Args),
    WebSearch(web_search::Args),
    ReadImage(read_image::Args),
    ReadMemory(read_memory::Args),
    WriteMemory(write_memory::Args),
    ReadSkill(read_skill::Args),
    AskUser(ask_user::Args),
    RestrictSelf(restrict_self::Args),
    RequestAction(request_action::Args),
    NixEval(crate::nix::eval::Args),
    ProvideTool(crate::nix::provide::Args),
    SpawnAgent(spawn_agent::Args),
    Diagnostics(diagnostics::Args),
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

    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        match self {
            Local::ReadFile(args) => args.decided_at(offered),
            Local::ListDirectory(args) => args.decided_at(offered),
            Local::Glob(args) => args.decided_at(offered),
            Local::Grep(args) => args.decided_at(offered),
            Local::WriteFile(args) => args.decided_at(offered),
            Local::EditFile(args) => args.decided_at(offered),
            Local::ReadGuidance(args) => args.decided_at(offered),
            Local::UpdatePlan(args) => args.decided_at(offered),
            Local::SetTitle(args) => args.decided_at(offered),
        }
    }

    /// Carries the call out in `workspace`, a write with no style rules
    /// and no language servers (the session's own writes go through
    /// [`carry_out`]).
    pub fn run(self, workspace: &Workspace) -> ToolOutput {
        let result = match self.step(workspace) {
            Step::Done(result) => result,
            Step::Write(pending) => pending.and_then(|pending| pending.commit()),
        };
        result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
    }

    /// Carries the call out, or plans the write it makes.
    fn step(self, workspace: &Workspace) -> Step {
        Step::Done(match self {
            Local::ReadFile(args) => read_file::run(workspace, args),
            Local::ListDirectory(args) => list_directory::run(workspace, args),
            Local::Glob(args) => glob::run(workspace, args),
            Local::Grep(args) => grep::run(workspace, args),
            Local::WriteFile(args) => return Step::Write(write_file::plan(workspace, args)),
            Local::EditFile(args) => return Step::Write(edit_file::plan(workspace, args)),
            Local::ReadGuidance(args) => read_guidance::run(workspace, args),
            Local::UpdatePlan(args) => update_plan::run(args),
            Local::SetTitle(args) => set_title::run(args),
        })
    }
}

/// An in-place call carried out, or the write it would make.
enum Step {
    Done(Result<ToolOutput, ToolError>),
    Write(Result<Pending, ToolError>),
}

/// A call of a tool known only at run time.
#[derive(Debug, Clone, PartialEq)]
pub struct External {
    pub source: Source,
    /// The tool's name at its source.
    pub tool: String,
    pub arguments: serde_json::Value,
}

pub use crate::source::Source;

impl External {
    /// The action the call is decided at.
    pub fn action_name(&self) -> String {
        match &self.source {
            Source::Mcp(server) => format!("mcp.{server}.tool.{}", self.tool),
            Source::Plugin(name) => format!("plugin.{name}.tool.{}", self.tool),
        }
    }
}

/// A run-time tool's call: its arguments are a JSON object (or nothing),
/// checked against the tool's schema by its source, which answers.
fn external(source: Source, tool: String, text: &str) -> Result<Call, Unparsed> {
    let arguments = if text.trim().is_empty() {
        serde_json::Value::Object(serde_json::Map::new())
    } else {
        serde_json::from_str(text).map_err(|err| Unparsed {
            tool: None,
            error: format!("the arguments are not JSON ({err}); send an object"),
        })?
    };
    if !arguments.is_object() {
        return Err(Unparsed {
            tool: None,
            error: format!("the arguments are {arguments}; send an object"),
        });
    }
    Ok(Call::External(External {
        source,
        tool,
        arguments,
    }))
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
        Call::parse_with(name, arguments, None)
    }

    /// [`Call::parse`], where `session` names the tools third parties
    /// offer (MCP servers', plugins'): a name that is no built-in tool is
    /// looked up there whole.
    pub fn parse_with(
        name: &str,
        arguments: &str,
        session: Option<&SessionTools<'_>>,
    ) -> Result<Call, Unparsed> {
        let Some(tool) = ToolName::parse(name) else {
            if let Some((source, tool)) = session.and_then(|s| s.find_external(name)) {
                return external(source, tool, arguments);
            }
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

    fn parse_tool(tool: ToolName, text: &str) -> Result<Call, ToolError> {
        Ok(match tool {
            ToolName::ReadFile => Call::Local(Local::ReadFile(arguments(text)?)),
            ToolName::ListDirectory => Call::Local(Local::ListDirectory(arguments(text)?)),
            ToolName::Glob => Call::Local(Local::Glob(arguments(text)?)),
            ToolName::Grep => Call::Local(Local::Grep(arguments(text)?)),
            ToolName::WriteFile => Call::Local(Local::WriteFile(arguments(text)?)),
            ToolName::EditFile => Call::Local(Local::EditFile(arguments(text)?)),
            ToolName::ReadGuidance => Call::Local(Local::ReadGuidance(arguments(text)?)),
            ToolName::UpdatePlan => Call::Local(Local::UpdatePlan(arguments(text)?)),
            ToolName::SetTitle => Call::Local(Local::SetTitle(arguments(text)?)),
            ToolName::RunCommand => Call::RunCommand(arguments(text)?),
            ToolName::JobOutput => Call::JobOutput(arguments(text)?),
            ToolName::ServePort => Call::ServePort(arguments(text)?),
            ToolName::FetchUrl => Call::FetchUrl(arguments(text)?),
            ToolName::WebSearch => Call::WebSearch(arguments(text)?),
            ToolName::ReadImage => Call::ReadImage(arguments(text)?),
            ToolName::ReadMemory => Call::ReadMemory(arguments(text)?),
            ToolName::WriteMemory => Call::WriteMemory(arguments(text)?),
            ToolName::ReadSkill => Call::ReadSkill(arguments(text)?),
            ToolName::AskUser => Call::AskUser(arguments(text)?),
            ToolName::RestrictSelf => Call::RestrictSelf(arguments(text)?),
            ToolName::RequestAction => Call::RequestAction(arguments(text)?),
            ToolName::NixEval => Call::NixEval(arguments(text)?),
            ToolName::ProvideTool => Call::ProvideTool(arguments(text)?),
            ToolName::SpawnAgent => Call::SpawnAgent(arguments(text)?),
            ToolName::Diagnostics => Call::Diagnostics(arguments(text)?),
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
            Call::ReadSkill(_) => ToolName::ReadSkill,
            Call::AskUser(_) => ToolName::AskUser,
            Call::RestrictSelf(_) => ToolName::RestrictSelf,
            Call::RequestAction(_) => ToolName::RequestAction,
            Call::NixEval(_) => ToolName::NixEval,
            Call::ProvideTool(_) => ToolName::ProvideTool,
            Call::SpawnAgent(_) => ToolName::SpawnAgent,
            Call::Diagnostics(_) => ToolName::Diagnostics,
            Call::External(_) => return None,
        })
    }
}

impl Call {
    /// The secrets the call asks to be given, by name (run_command's
    /// `secrets`); each is decided at `secret.use.<name>` after the call's
    /// own action.
    pub fn secrets(&self) -> &[String] {
        match self {
            Call::RunCommand(args) => &args.secrets,
            _ => &[],
        }
    }

    /// The action the call is decided at, as the tool's own file says
    /// (`Tool::decided_at`): a command at its program's `exec.*` action
    /// (or where the git shim sorts it), serve_port at `net.serve.<port>`,
    /// fetch_url at `net.fetch.<host>`, web_search at `web.search`, most
    /// tools at `call.<tool>`, the plan, the title and job_output at
    /// nothing; the session tools by the session as it carries them out;
    /// a run-time tool at its own name.
    pub fn decided_at(&self, offered: Offered<'_>) -> Decide {
        match self {
            Call::Local(local) => local.decided_at(offered),
            Call::RunCommand(args) => args.decided_at(offered),
            Call::JobOutput(args) => args.decided_at(offered),
            Call::ServePort(args) => args.decided_at(offered),
            Call::FetchUrl(args) => args.decided_at(offered),
            Call::WebSearch(args) => args.decided_at(offered),
            Call::ReadImage(args) => args.decided_at(offered),
            Call::ReadMemory(args) => args.decided_at(offered),
            Call::WriteMemory(args) => args.decided_at(offered),
            Call::ReadSkill(args) => args.decided_at(offered),
            Call::AskUser(args) => args.decided_at(offered),
            Call::RestrictSelf(args) => args.decided_at(offered),
            Call::RequestAction(args) => args.decided_at(offered),
            Call::NixEval(args) => args.decided_at(offered),
            Call::ProvideTool(args) => args.decided_at(offered),
            Call::SpawnAgent(args) => args.decided_at(offered),
            Call::Diagnostics(args) => args.decided_at(offered),
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

/// Carries out a decided call: commands through `commands` (the session's
/// sandbox), given `env` (the secrets decided for this call, as variables),
/// the tools that reach past the workspace through `session`, the rest in
/// place. The session tools never get here (the session carries them out
/// while it decides them); a run-time tool has no source yet.
pub async fn carry_out(
    call: Call,
    workspace: &Workspace,
    commands: &Commands,
    session: &SessionTools<'_>,
    env: &[(String, String)],
) -> ToolOutput {
    let result = match call {
        Call::Local(local) => match local.step(workspace) {
            Step::Done(result) => result,
            Step::Write(Ok(pending)) => Ok(session.write(pending).await),
            Step::Write(Err(err)) => Err(err),
        },
        Call::RunCommand(args) => {
            let mut output = commands.run_args(&args, env).await;
            if let Some(said) = session.after_command(workspace).await {
                output.text.push_str("\n\n");
                output.text.push_str(&said);
            }
            Ok(output)
        }
        Call::JobOutput(args) => Ok(commands.job_output(&args).await),
        Call::ServePort(args) => Ok(commands.serve_port(&args)),
        Call::FetchUrl(args) => Ok(session.fetch(args).await),
        Call::WebSearch(args) => session.search(args).await,
        Call::ReadImage(args) => session.read_image(workspace, args),
        Call::ReadMemory(args) => session.read_memory(args),
        Call::WriteMemory(args) => session.write_memory(args),
        Call::ReadSkill(args) => session.read_skill(args),
        Call::NixEval(args) => Ok(session.nix_eval(args, commands).await),
        Call::ProvideTool(args) => Ok(session.provide(args, commands).await),
        Call::Diagnostics(args) => diagnostics::run(workspace, session.lsp(), args).await,
        Call::AskUser(_) | Call::RestrictSelf(_) | Call::RequestAction(_) | Call::SpawnAgent(_) => {
            Err(ToolError::Failed(
                "a session tool is carried out by the session itself".to_owned(),
            ))
        }
        Call::External(External {
            source: Source::Mcp(server),
            tool,
            arguments,
        }) => Ok(session.mcp_call(&server, &tool, arguments).await),
        Call::External(External {
            source: Source::Plugin(plugin),
            tool,
            arguments,
        }) => Ok(session.plugin_call(&plugin, &tool, &arguments)),
    };
    result.unwrap_or_else(|err| ToolOutput::error(err.to_string()))
}

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

#[cfg(test)]
mod tests {
    use chock_policy::Action;

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
            mcp.decided_at(Offered::default()),
            Decide::At("mcp.time.tool.get_current_time".parse().unwrap())
        );
        let plugin = call(Source::Plugin("hello".into()), "greet");
        assert_eq!(
            plugin.decided_at(Offered::default()),
            Decide::At("plugin.hello.tool.greet".parse().unwrap())
        );
        let bad = call(Source::Mcp("time".into()), "two words");
        assert!(matches!(
            bad.decided_at(Offered::default()),
            Decide::Refuse(_)
        ));
        assert_eq!(bad.tool(), None);
    }

    #[test]
    fn a_call_is_parsed_once_into_its_arm_or_an_error_naming_the_tool() {
        let read = Call::parse("read_file", r#"{"path": "a.txt"}"#).unwrap();
        assert_eq!(read.tool(), Some(ToolName::ReadFile));
        assert_eq!(
            read.decided_at(Offered::default()),
            Decide::At(Action::call("read_file").unwrap())
        );
        let unknown = Call::parse("frobnicate", "{}").unwrap_err();
        assert_eq!(unknown.tool, None);
        assert!(unknown.error.contains("no tool named"), "{}", unknown.error);
        let bad = Call::parse("run_command", r#"{"command": []}"#).unwrap_err();
        assert_eq!(bad.tool, Some(ToolName::RunCommand));
        assert!(bad.error.contains("command is empty"), "{}", bad.error);
        let title = Call::parse("set_title", r#"{"title": "t"}"#).unwrap();
        assert_eq!(title.decided_at(Offered::default()), Decide::Nothing);
    }
}
