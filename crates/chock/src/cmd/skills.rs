//! `chock skills`: the skills a session in a project would be offered, by
//! layer, with the ones a skill of the same name in an earlier layer hides
//! and the ones skipped (docs/skills.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use chock_runner::config::Config;
use chock_runner::tools::{Skill, SkillDirs, Skills};
use clap::Args as ClapArgs;

use super::output::outln;
use crate::exit;

/// List the skills a session would be offered, by layer.
///
/// Layers, in the order a name is looked up (the first wins): operator
/// (config.zon's .skills_dir, else $XDG_CONFIG_HOME/chock/skills), project
/// (.chock/skills in the project), packaged ($CHOCK_SKILLS_PATH, then
/// share/chock/skills of each profile on PATH). A skill another layer's
/// skill of the same name hides is shown as hidden. docs/skills.md has the
/// format.
#[derive(Debug, ClapArgs)]
pub(crate) struct Args {
    /// The project directory whose .chock/skills is read.
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
    /// Print one JSON object: offered, hidden and skipped.
    #[arg(long)]
    json: bool,
}

/// `chock skills --json`.
#[derive(serde::Serialize)]
struct Report<'a> {
    offered: &'a [Skill],
    hidden: &'a [Skill],
    skipped: &'a [String],
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = chock_runner::default_config_path();
    let config = Config::load(&path)?;
    let project = args.project.canonicalize().with_context(|| {
        format!(
            "cannot use the project directory {}: give an existing directory with --project",
            args.project.display()
        )
    })?;
    let skills = Skills::load(&SkillDirs::discover(config.skills_dir.as_deref(), &project));
    if args.json {
        let report = Report {
            offered: &skills.offered,
            hidden: &skills.shadowed,
            skipped: &skills.skipped,
        };
        outln!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::from(exit::SUCCESS));
    }
    for layer in ["operator", "project", "packaged"] {
        let of_layer = |list: &[Skill]| -> Vec<String> {
            list.iter()
                .filter(|s| s.layer.as_str() == layer)
                .map(|s| format!("  {}  {}  ({})", s.name, s.description, s.dir.display()))
                .collect()
        };
        let offered = of_layer(&skills.offered);
        let hidden: Vec<String> = of_layer(&skills.shadowed)
            .into_iter()
            .map(|line| format!("{line}  hidden: an earlier layer has a skill of this name"))
            .collect();
        outln!("{layer}:");
        if offered.is_empty() && hidden.is_empty() {
            outln!("  (none)");
        }
        for line in offered.iter().chain(&hidden) {
            outln!("{line}");
        }
    }
    for why in &skills.skipped {
        eprintln!("chock: note: {why}");
    }
    Ok(ExitCode::from(exit::SUCCESS))
}
