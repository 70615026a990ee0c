//! `read_skill`: a skill's body, or a named file inside its directory,
//! decided at `skill.read.<layer>` of the layer the skill came from. The
//! skill's own name never becomes part of the action (seed 004), so a
//! project with forty skills adds no rule.

use std::path::Path;

use chock_policy::Action;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Decide, ToolError, ToolOutput};
use crate::skills::{self, SKILL_FILE, Skills};
use crate::tool::{Offered, Tool};

/// Read one of the skills listed in the instructions: its SKILL.md body, or
/// a file inside the skill's directory that the body names. A skill is
/// written instructions; it permits nothing.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The skill's name, as the instructions list it
    name: String,
    /// A file inside the skill's directory, relative to it (e.g.
    /// "reference.md"); its SKILL.md body when omitted
    file: Option<String>,
}

impl Tool for Args {
    const NAME: &'static str = "read_skill";

    /// Decided at `skill.read.<layer>` of the skill named; a name the
    /// session does not offer is answered by the tool, asking nobody.
    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        match offered.skills.and_then(|s| s.find(&self.name)) {
            Some(skill) => Decide::At(Action::skill_read(skill.layer)),
            None => Decide::Nothing,
        }
    }
}

pub(super) fn run(skills: &Skills, args: Args) -> Result<ToolOutput, ToolError> {
    let Some(skill) = skills.find(&args.name) else {
        let names: Vec<&str> = skills.offered.iter().map(|s| s.name.as_str()).collect();
        return Err(ToolError::Failed(if names.is_empty() {
            format!(
                "there is no skill named '{}': this session offers none",
                args.name
            )
        } else {
            format!(
                "there is no skill named '{}'; the skills are: {}",
                args.name,
                names.join(", ")
            )
        }));
    };
    let file = args.file.as_deref().unwrap_or(SKILL_FILE);
    let text = skills::read_in(skill.layer, &skill.dir, Path::new(file)).map_err(|why| {
        ToolError::Failed(format!(
            "cannot read {file} of the skill {}: {why}",
            skill.name
        ))
    })?;
    if args.file.is_some() {
        return Ok(ToolOutput::ok(text));
    }
    match skills::parse(&text) {
        Ok((_, _, body)) => Ok(ToolOutput::ok(body.to_owned())),
        Err(why) => Err(ToolError::Failed(format!(
            "the skill {}'s SKILL.md changed since the session started and {why}",
            skill.name
        ))),
    }
}
