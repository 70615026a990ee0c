//! The models a running session may switch to: the operator's config.zon
//! as the session read it at its start, and what turns a name into a
//! provider. `/model <instance>/<model>` in an interactive session comes
//! here, and is decided exactly as the session's own model was at its
//! start (`Config::choose`, model.select, `Provider::new`), so a model the
//! start would have refused is refused here too, with the session keeping
//! the model it has.

use std::path::{Path, PathBuf};

use chock_policy::{Policy, Verdict};

use crate::config::{Config, ModelChoice, ProviderConfig};
use crate::provider::Provider;

/// The context window assumed for an Anthropic model config.zon says
/// nothing about.
pub(crate) const DEFAULT_ANTHROPIC_WINDOW: u64 = 200_000;
/// The context window assumed for any other model config.zon says nothing
/// about (what local servers commonly run with).
pub(crate) const DEFAULT_WINDOW: u64 = 32_768;

/// What a session can choose another model from.
#[derive(Debug)]
pub struct Models {
    config: Config,
    /// The config file, for its errors.
    path: PathBuf,
    /// Where a provider's relative script path is resolved.
    project: PathBuf,
}

/// A model switched to: the provider built for it, its name there, its
/// label and context window, and the rule that let it be used.
#[derive(Debug)]
pub(crate) struct Switched {
    pub(crate) provider: Provider,
    pub(crate) model: String,
    /// `instance/model`.
    pub(crate) label: String,
    pub(crate) window: u64,
    /// model.select's answer, as a sentence: the rule, or that none
    /// matched.
    pub(crate) rule: String,
}

impl Models {
    #[must_use]
    pub fn new(config: Config, path: &Path, project: &Path) -> Models {
        Models {
            config,
            path: path.to_owned(),
            project: project.to_owned(),
        }
    }

    /// The model `name` (`instance/model`) chosen, allowed at model.select
    /// and built; or the sentence saying why not, which names `current`
    /// as the model the session keeps.
    pub(crate) fn switch(
        &self,
        policy: &Policy,
        name: &str,
        current: &str,
    ) -> Result<Switched, String> {
        let keeps = format!("the session keeps {current}");
        let chosen = self
            .config
            .choose(Some(name), &self.path)
            .map_err(|err| format!("{err}; {keeps}"))?;
        let label = format!("{}/{}", chosen.instance, chosen.model);
        let verdict = policy
            .model_select(chosen.instance, chosen.model)
            .map_err(|err| format!("the model '{label}' cannot be used: {err}; {keeps}"))?;
        if verdict.refused() {
            return Err(format!(
                "the policy does not let this session use the model '{label}': model.select answers {} ({}), and only allow lets a model be used; {keeps}. Pick another model, or see why with chock policy explain {} --before-first-turn",
                verdict.decision,
                rule_of(&verdict),
                verdict.action
            ));
        }
        let provider = Provider::new(chosen.instance, chosen.provider, &self.project)
            .map_err(|err| format!("{err}; {keeps}"))?;
        Ok(Switched {
            provider,
            model: chosen.model.to_owned(),
            window: window(&self.config, &chosen),
            rule: format!("model.select {} ({})", verdict.decision, rule_of(&verdict)),
            label,
        })
    }
}

/// The context window of a chosen model: config.zon's, else the default
/// for its kind of provider.
pub(crate) fn window(config: &Config, chosen: &ModelChoice<'_>) -> u64 {
    config
        .context_window(chosen.instance)
        .unwrap_or(match chosen.provider {
            ProviderConfig::Anthropic(_) => DEFAULT_ANTHROPIC_WINDOW,
            _ => DEFAULT_WINDOW,
        })
}

/// The rule that decided, where it is written; or that none matched.
fn rule_of(verdict: &Verdict) -> String {
    match &verdict.rule {
        Some(rule) => format!(
            "{} rule {} at {}",
            verdict.layer.describe(),
            rule.text,
            rule.location(verdict.layer)
        ),
        None => format!("{}: no rule names it", verdict.layer.describe()),
    }
}
