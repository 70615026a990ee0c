//! Giving a tool call the secrets it names (docs/secrets.md): each is
//! decided at `secret.use.<name>` after the call's own action, through the
//! session's one judge, then read from its source. The first that is not
//! given refuses the whole call: a command is never run with a secret
//! missing. Kept apart from `secrets.rs` (the values and their redaction),
//! which needs nothing of the session.

use chock_log::event::Notice;
use chock_policy::{Action, BindTarget, Decision, rule_block};

use crate::provider::ToolCall;
use crate::secrets::{Given, read_value};
use crate::session::{LogHooks, SessionError};

impl<F> LogHooks<'_, F> {
    /// The secrets `names` for `call`, decided and read: `Ok(Err)` is the
    /// refusal the model reads. The log records that each was given to the
    /// call, never its value.
    pub(crate) async fn give_secrets(
        &mut self,
        call: &ToolCall,
        names: &[String],
    ) -> Result<Result<Given, String>, SessionError> {
        let mut given = Vec::new();
        let mut said = Vec::new();
        for name in names {
            let Some(spec) = self.policy.secret(name) else {
                let known: Vec<&str> = self
                    .policy
                    .secrets()
                    .iter()
                    .filter(|s| s.bind.target == BindTarget::Command)
                    .map(|s| s.name.as_str())
                    .collect();
                return Ok(Err(format!(
                    "there is no secret named {name} (the secrets a command can be given: {}); the call was not run",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )));
            };
            if spec.bind.target != BindTarget::Command {
                return Ok(Err(format!(
                    "the secret {name} is bound to {}, not to run_command; the call was not run",
                    spec.bind.target.describe()
                )));
            }
            let action = match Action::secret_use(name) {
                Ok(action) => action,
                Err(err) => return Ok(Err(format!("{err}; the call was not run"))),
            };
            // A secret nobody granted cannot be asked for: with no rule
            // naming it (a deny is a rule, and is recorded as one), nobody
            // is asked.
            if !self.judge.could_permit(action.as_str())
                && self.judge.decision(&action) != Decision::Deny
            {
                return Ok(Err(format!(
                    "no rule grants {action}, and a secret nobody granted cannot be asked for: the call was not run; to give it (or to be asked each time, .ask), add to chock.zon:\n{}",
                    rule_block(&format!(
                        ".{{ .action = \"{action}\", .decision = .allow }}"
                    ))
                )));
            }
            if let Some(refusal) = self.gate(call, &action).await? {
                return Ok(Err(format!(
                    "{refusal}\nThe call was not run: it is not run without the secret {name}."
                )));
            }
            match read_value(spec).await {
                Ok(value) => {
                    self.secrets.remember(name, &value);
                    given.push((spec.bind.env.clone(), value));
                    said.push(format!(
                        "secret {name} was given to call {} as ${}",
                        call.id, spec.bind.env
                    ));
                }
                Err(why) => {
                    return Ok(Err(format!(
                        "the secret {name} could not be read: {why}; the call was not run without it"
                    )));
                }
            }
        }
        for text in said {
            self.append(Notice {
                subject: "secret".to_owned(),
                text,
            })?;
        }
        Ok(Ok(Given(given)))
    }
}
