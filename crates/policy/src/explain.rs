//! Building a [`Verdict`]: the same fold as [`Policy::decision`], keeping
//! every rule that matched so a person can see which one decided and why the
//! others did not. Kept apart from the hot path, which only needs the answer.

use crate::action::{Action, ActionError};
use crate::decision::Decision;
use crate::policy::{OrgLayer, Policy, effective};
use crate::rule::{LayerKind, Rule, rule_text};
use crate::verdict::{Help, Loser, Timing, Verdict, rule_block};

struct Decider {
    decision: Decision,
    layer: LayerKind,
    rule: Option<Rule>,
    promise: Option<u64>,
}

fn loser(layer: LayerKind, rule: &Rule, decision: Decision, why: impl Into<String>) -> Loser {
    Loser {
        layer,
        rule: rule.origin.clone(),
        decision,
        why: why.into(),
    }
}

fn lost_inside(layer: LayerKind, rules: &[&Rule], action: &str, losers: &mut Vec<Loser>) {
    if let Some((best, rest)) = rules.split_first() {
        for r in rest {
            let why = format!("less specific than {} in the same layer", best.origin.text);
            losers.push(loser(layer, r, effective(r, action).0, why));
        }
    }
}

impl Policy {
    /// The decision for `action` asked at a call, with its reasons.
    pub fn decide(&self, action: &Action) -> Verdict {
        self.decide_at(action.as_str(), Timing::AtCall)
    }

    /// The decision for a row read before the first turn (nix.build,
    /// sandbox.jit, an MCP server's rows and secrets at its start, a plugin
    /// capability): nobody can be asked, so anything but allow refuses.
    pub fn decide_before_first_turn(&self, action: &Action) -> Verdict {
        self.decide_at(action.as_str(), Timing::BeforeFirstTurn)
    }

    /// The decision for a background command, which never asks: anything
    /// but allow refuses rather than waiting for a person.
    pub fn decide_background(&self, action: &Action) -> Verdict {
        self.decide_at(action.as_str(), Timing::Background)
    }

    /// The decision where nobody may be asked while the session runs: a
    /// redirect hop of fetch_url (a hop no rule allows is refused, so a page
    /// cannot chain redirects into a stream of prompts), or a device row
    /// (`device.*`: ask refuses there). Anything but allow refuses.
    pub fn decide_unattended(&self, action: &Action) -> Verdict {
        self.decide_at(action.as_str(), Timing::Unattended)
    }

    /// model.select: the narrower of `provider.<instance>` and
    /// `provider.<instance>.<model>` answers, read before the first turn.
    /// Fails where the instance or model id cannot be named in a rule.
    pub fn model_select(&self, instance: &str, model: &str) -> Result<Verdict, ActionError> {
        let wide_action = Action::provider(instance)?;
        let narrow_action = Action::provider_model(instance, model)?;
        let wide = self.decide_at(wide_action.as_str(), Timing::BeforeFirstTurn);
        let narrow = self.decide_at(narrow_action.as_str(), Timing::BeforeFirstTurn);
        let (mut win, lose) = if wide.decision < narrow.decision {
            (wide, narrow)
        } else {
            (narrow, wide)
        };
        if let Some(rule) = lose.rule {
            win.losers.push(Loser {
                layer: lose.layer,
                rule,
                decision: lose.decision,
                why: format!(
                    "model.select reads {} too, and the narrower of the two answers",
                    win.action
                ),
            });
        }
        win.notes.push(format!(
            "model.select reads {wide_action} and {narrow_action}; the narrower answers"
        ));
        Ok(win)
    }

    /// Whether a third party's tool (or its MCP server, or its plugin) is
    /// offered at session start: only a deny is spent there, and it keeps the
    /// tool out entirely. Every other answer leaves it offered, and the same
    /// key is asked again at each call with [`Policy::decide`].
    pub fn offered_at_start(&self, action: &Action) -> bool {
        self.decision(action) != Decision::Deny
    }

    pub(crate) fn decide_at(&self, action: &str, timing: Timing) -> Verdict {
        let mut losers = Vec::new();
        let mut notes = Vec::new();
        let op = self
            .operator
            .as_ref()
            .map(|l| l.all(action))
            .unwrap_or_default();
        let pr = self
            .project
            .as_ref()
            .map(|l| l.all(action))
            .unwrap_or_default();
        lost_inside(LayerKind::Operator, &op, action, &mut losers);
        lost_inside(LayerKind::Project, &pr, action, &mut losers);
        let person = self.person(action);
        if let (Some(o), Some(p)) = (op.first(), pr.first()) {
            let (other, layer) = if person.layer == LayerKind::Operator {
                (p, LayerKind::Project)
            } else {
                (o, LayerKind::Operator)
            };
            let why =
                "the operator's and the project's rules both match; the narrower of the two stands";
            losers.push(loser(layer, other, effective(other, action).0, why));
        }
        if !op.is_empty() || !pr.is_empty() {
            for d in self.defaults.all(action) {
                let why = "a shipped default is read only where neither the project nor the operator has a matching rule";
                losers.push(loser(LayerKind::Default, d, d.decision, why));
            }
        }
        if person.layer == LayerKind::Default {
            lost_inside(
                LayerKind::Default,
                &self.defaults.all(action),
                action,
                &mut losers,
            );
        }
        if person.layer == LayerKind::None {
            notes
                .push("no rule names this action, and nothing ships for it, so it asks".to_owned());
        }
        if person.serve_capped {
            notes.push(
                "a pattern names no port, so it publishes nothing: its allow reads as ask here; an exact net.serve.<port> rule publishes".to_owned(),
            );
        }
        let mut decider = Decider {
            decision: person.decision,
            layer: person.layer,
            rule: person.rule.cloned(),
            promise: None,
        };
        match &self.org {
            OrgLayer::Absent => {}
            OrgLayer::Unreadable { path, reason } => {
                notes.push(format!(
                    "the org bundle {} could not be read ({reason}), so it refuses everything it could have capped",
                    path.display()
                ));
                self.replace(
                    &mut decider,
                    Decider {
                        decision: Decision::Deny,
                        layer: LayerKind::Org,
                        rule: None,
                        promise: None,
                    },
                    &mut losers,
                );
            }
            OrgLayer::Rules(l) => {
                let all = l.all(action);
                lost_inside(LayerKind::Org, &all, action, &mut losers);
                if let Some(r) = all.first() {
                    self.ceiling(&mut decider, LayerKind::Org, r, None, &mut losers);
                }
            }
        }
        for p in &self.promises {
            let all = p.layer.all(action);
            lost_inside(LayerKind::Promise, &all, action, &mut losers);
            if let Some(r) = all.first() {
                self.ceiling(
                    &mut decider,
                    LayerKind::Promise,
                    r,
                    Some(p.id.0),
                    &mut losers,
                );
            }
        }
        if timing != Timing::AtCall && decider.decision != Decision::Allow {
            notes.push(match timing {
                Timing::Background => "a background command never asks: anything but allow refuses it".to_owned(),
                Timing::Unattended => "nobody may be asked about this while the session runs: anything but allow refuses".to_owned(),
                _ => "this row is read before the first turn, when nobody is there to answer: anything but allow refuses".to_owned(),
            });
        }
        let help = self.help(action, &decider);
        Verdict {
            action: action.to_owned(),
            decision: decider.decision,
            timing,
            layer: decider.layer,
            rule: decider.rule.map(|r| r.origin),
            losers,
            notes,
            help,
        }
    }

    /// Folds a ceiling rule (org or promise) into the decider.
    fn ceiling(
        &self,
        decider: &mut Decider,
        layer: LayerKind,
        rule: &Rule,
        promise: Option<u64>,
        losers: &mut Vec<Loser>,
    ) {
        if rule.decision < decider.decision {
            let next = Decider {
                decision: rule.decision,
                layer,
                rule: Some(rule.clone()),
                promise,
            };
            self.replace(decider, next, losers);
        } else {
            let why = match layer {
                LayerKind::Org => {
                    "the org bundle is a ceiling, and this answer is already at or under it"
                }
                _ => "a promise only narrows, and this answer is already at or under it",
            };
            losers.push(loser(layer, rule, rule.decision, why));
        }
    }

    fn replace(&self, decider: &mut Decider, next: Decider, losers: &mut Vec<Loser>) {
        if let Some(old) = &decider.rule {
            let why = match next.layer {
                LayerKind::Org => "the org bundle is a ceiling that nothing under it can raise",
                _ => "a promise the session made narrows it, and only policy.widen leaves one",
            };
            losers.push(loser(decider.layer, old, decider.decision, why));
        }
        *decider = next;
    }

    fn help(&self, action: &str, decider: &Decider) -> Option<Help> {
        if decider.decision == Decision::Allow {
            return None;
        }
        match decider.layer {
            LayerKind::Org => {
                let file = match &self.org {
                    OrgLayer::Rules(l) => l.file.clone(),
                    OrgLayer::Unreadable { path, .. } => Some(path.clone()),
                    OrgLayer::Absent => None,
                };
                return Some(Help::OrgCeiling { file });
            }
            LayerKind::Promise => return decider.promise.map(|id| Help::Promise { id }),
            _ => {}
        }
        if let Some(rule) = &decider.rule {
            let exact = matches!(&rule.pattern, crate::Pattern::Exact(a) if a.as_str() == action);
            if exact && rule.origin.file.is_some() {
                return Some(Help::ChangeRule {
                    at: rule.origin.location(decider.layer),
                    rule: rule_text(&rule.pattern, Decision::Allow),
                });
            }
        }
        // The rule goes in the file whose rule decided; where no person's
        // rule matched, in the project's, except for provider rows, which
        // name instances of the operator's own config.zon.
        let operator = match decider.layer {
            LayerKind::Operator => true,
            LayerKind::Project => false,
            _ => action.starts_with("provider.") || self.project_file.is_none(),
        };
        let (file, layer) = if operator {
            (self.operator_file.clone(), LayerKind::Operator)
        } else {
            (self.project_file.clone(), LayerKind::Project)
        };
        let Ok(pattern) = crate::Pattern::parse(action) else {
            return None;
        };
        let rule = rule_text(&pattern, Decision::Allow);
        Some(Help::AddRule {
            block: rule_block(&rule),
            rule,
            file,
            layer,
        })
    }
}
