//! The folded policy of one session: its layers, the fast answer, promises,
//! subagents and the network words.
//!
//! The fold, for one action:
//! 1. The person's side. The operator's and the project's most specific
//!    matching rules stand beside each other: where both match the narrower
//!    answers, where one matches it answers, and only where neither matches
//!    are the shipped defaults read. Nothing matching anywhere asks.
//! 2. The org bundle is a ceiling: its most specific matching rule is
//!    folded in with `min`, so nothing under it can raise it. A bundle that
//!    exists but cannot be read is a ceiling of deny for everything.
//! 3. Each promise (restrict_self) is a layer folded in with `min` too.
//!
//! Inside every layer the most specific rule wins (see [`crate::pattern`]).

use std::path::PathBuf;
use std::sync::Arc;

use crate::decision::Decision;
use crate::defaults;
use crate::index::{Index, Merged};
use crate::net::{self, NetMode, NetSettings, ResolverMode};
use crate::pattern::Pattern;
use crate::rule::{LayerKind, Rule};

/// The rules of one file (or of one promise), and its `.policy.net` words.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// The file they were read from.
    pub file: Option<PathBuf>,
    /// The file's `.policy.net` block.
    pub net: NetSettings,
    /// The file's `.secrets` block.
    pub secrets: Vec<crate::SecretSpec>,
    /// The file's top-level blocks Chock does not act on.
    pub unread: Vec<crate::Problem>,
    /// The file's `.mcp` block: the MCP servers it names.
    pub mcp: Vec<crate::mcp::McpServer>,
    /// The file's `.plugins` block: the plugins it enables.
    pub plugins: Vec<String>,
    /// The file's `.workspace.binds`: paths the worktree does not carry.
    pub binds: Vec<crate::binds::WorkspaceBind>,
    /// The file's `.devices` block.
    pub devices: Vec<crate::devices::NamedDevice>,
    /// The file's `.lsp` block: the language servers it names.
    pub lsp: Vec<crate::lsp::LspServer>,
    /// The file's `.style` block: its style rules.
    pub style: Vec<crate::style::StyleRule>,
}

impl RuleSet {
    /// Rules with no file behind them.
    pub fn new(rules: Vec<Rule>) -> RuleSet {
        RuleSet {
            rules,
            ..RuleSet::default()
        }
    }
}

/// The org bundle as the session found it.
#[derive(Debug, Clone, Default)]
#[expect(
    clippy::large_enum_variant,
    reason = "one value a session, read once at its start: boxing the rules would buy nothing"
)]
pub enum Org {
    /// There is no bundle: no ceiling.
    #[default]
    Absent,
    /// The bundle's rules.
    Rules(RuleSet),
    /// The bundle exists (or was named) but could not be read or parsed: a
    /// ceiling of deny over everything it could have capped, and it says why.
    Unreadable {
        /// The bundle's path.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// Everything a policy is folded from.
#[derive(Debug, Clone, Default)]
pub struct Layers {
    /// The organisation's ceiling.
    pub org: Org,
    /// The operator's config.zon, if there is one.
    pub operator: Option<RuleSet>,
    /// The project's chock.zon, if there is one.
    pub project: Option<RuleSet>,
    /// Where the project's chock.zon is or would be, for refusal help.
    pub project_file: Option<PathBuf>,
    /// Where the operator's config.zon is or would be, for refusal help.
    pub operator_file: Option<PathBuf>,
}

#[derive(Debug)]
pub(crate) struct Layer {
    pub(crate) rules: Vec<Rule>,
    pub(crate) index: Index,
    pub(crate) file: Option<PathBuf>,
}

impl Layer {
    fn new(set: RuleSet) -> Arc<Layer> {
        Arc::new(Layer {
            index: Index::build(&set.rules),
            rules: set.rules,
            file: set.file,
        })
    }

    pub(crate) fn best(&self, action: &str) -> Option<&Rule> {
        self.index.best(action).map(|i| &self.rules[i as usize])
    }

    pub(crate) fn all(&self, action: &str) -> Vec<&Rule> {
        self.index
            .all(action)
            .into_iter()
            .map(|i| &self.rules[i as usize])
            .collect()
    }
}

#[derive(Debug, Clone)]
pub(crate) enum OrgLayer {
    Absent,
    Rules(Arc<Layer>),
    Unreadable { path: PathBuf, reason: String },
}

/// A promise's handle, for [`Policy::widen`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PromiseId(pub u64);

#[derive(Debug, Clone)]
pub(crate) struct Promise {
    pub(crate) id: PromiseId,
    pub(crate) layer: Arc<Layer>,
    /// Made by a parent session: a subagent cannot leave it.
    pub(crate) inherited: bool,
}

/// Why a promise was not left.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WidenError {
    /// No promise has that id.
    #[error("no promise {0:?} is in force: nothing to widen")]
    NoSuchPromise(PromiseId),
    /// The promise came from the parent session.
    #[error(
        "promise {0:?} was made by the parent session: a subagent cannot widen its parent's policy"
    )]
    Inherited(PromiseId),
    /// `policy.widen` answered deny.
    #[error("policy.widen is denied here, so promise {0:?} stays in force")]
    Denied(PromiseId),
    /// `policy.widen` needs a yes that was not given.
    #[error(
        "policy.widen answers {decision} and nobody said yes, so promise {id:?} stays in force"
    )]
    NotApproved {
        /// The promise.
        id: PromiseId,
        /// What policy.widen answered.
        decision: Decision,
    },
}

/// One session's folded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub(crate) org: OrgLayer,
    pub(crate) operator: Option<Arc<Layer>>,
    pub(crate) project: Option<Arc<Layer>>,
    pub(crate) defaults: Arc<Layer>,
    pub(crate) promises: Vec<Promise>,
    next_promise: u64,
    pub(crate) project_file: Option<PathBuf>,
    pub(crate) operator_file: Option<PathBuf>,
    router: NetMode,
    background: NetMode,
    resolver: ResolverMode,
    resolver_ports: Vec<u16>,
    /// The MCP servers of the operator's and the project's files.
    mcp: Arc<crate::mcp::McpServers>,
    plugins: Arc<[String]>,
    /// The language servers of the operator's and the project's files, the
    /// operator's first.
    lsp: Arc<[crate::lsp::LspServer]>,
    /// The style rules of the operator's and the project's files, the
    /// operator's first.
    style: Arc<[crate::style::StyleRule]>,
    /// Org, operator, project and defaults in one trie, for the hot path.
    merged: Arc<Merged<4>>,
    /// The secrets the operator's and the project's files name, the
    /// operator's first.
    secrets: Arc<[crate::SecretSpec]>,
    /// Each top-level block of a policy file that Chock does not act on, as
    /// `<file>:<line>:<column>: <what>`.
    unread: Arc<[String]>,
    /// What the project's chock.zon names beside the worktree: its
    /// `.workspace` binds and its `.devices` (no other file names them).
    beside: Arc<Beside>,
}

/// The project's binds and devices.
#[derive(Debug, Default)]
struct Beside {
    binds: Vec<crate::binds::WorkspaceBind>,
    devices: Vec<crate::devices::NamedDevice>,
}

/// The person's side of the fold for one action, before ceilings.
pub(crate) struct PersonAnswer<'a> {
    pub(crate) decision: Decision,
    pub(crate) layer: LayerKind,
    pub(crate) rule: Option<&'a Rule>,
    /// A `net.serve` pattern's allow was read as ask.
    pub(crate) serve_capped: bool,
}

/// A `net.serve.*` pattern names no port, so it publishes nothing: a class or
/// catch-all allow there reads as ask, and only an exact rule can allow.
pub(crate) fn effective(rule: &Rule, action: &str) -> (Decision, bool) {
    let serve = action.starts_with("net.serve.");
    if serve && rule.decision == Decision::Allow && !matches!(rule.pattern, Pattern::Exact(_)) {
        (Decision::Ask, true)
    } else {
        (rule.decision, false)
    }
}

fn pick<'a>(layer: LayerKind, rule: &'a Rule, action: &str) -> PersonAnswer<'a> {
    let (decision, serve_capped) = effective(rule, action);
    PersonAnswer {
        decision,
        layer,
        rule: Some(rule),
        serve_capped,
    }
}

fn org_set(org: &Org) -> Option<&RuleSet> {
    match org {
        Org::Rules(set) => Some(set),
        Org::Absent | Org::Unreadable { .. } => None,
    }
}

fn rules_of(layer: Option<&Arc<Layer>>) -> &[Rule] {
    layer.map_or(&[], |l| l.rules.as_slice())
}

impl Policy {
    /// Folds `layers` with the shipped defaults.
    pub fn new(layers: Layers) -> Policy {
        let org_net = match &layers.org {
            Org::Rules(set) => set.net.clone(),
            Org::Unreadable { .. } => NetSettings {
                router: Some(NetMode::None),
                background: Some(NetMode::None),
                resolver: Some(ResolverMode::None),
                resolver_ports: None,
            },
            Org::Absent => NetSettings::default(),
        };
        let op_net = layers
            .operator
            .as_ref()
            .map(|s| s.net.clone())
            .unwrap_or_default();
        let pr_net = layers
            .project
            .as_ref()
            .map(|s| s.net.clone())
            .unwrap_or_default();
        let unread: Vec<String> = [
            org_set(&layers.org),
            layers.operator.as_ref(),
            layers.project.as_ref(),
        ]
        .into_iter()
        .flatten()
        .flat_map(|set| {
            let file = set
                .file
                .as_ref()
                .map_or_else(String::new, |f| format!("{}:", f.display()));
            set.unread.iter().map(move |p| format!("{file}{p}"))
        })
        .collect();
        let secrets: Vec<crate::SecretSpec> = [layers.operator.as_ref(), layers.project.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|set| set.secrets.iter().cloned())
            .collect();
        let mcp = Arc::new(crate::mcp::McpServers::of(
            layers.operator.as_ref().map_or(&[], |s| s.mcp.as_slice()),
            layers.project.as_ref().map_or(&[], |s| s.mcp.as_slice()),
        ));
        let mut plugins: Vec<String> = Vec::new();
        for name in [layers.operator.as_ref(), layers.project.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|set| set.plugins.iter())
        {
            if !plugins.contains(name) {
                plugins.push(name.clone());
            }
        }
        let beside = Arc::new(
            layers
                .project
                .as_ref()
                .map_or_else(Beside::default, |set| Beside {
                    binds: set.binds.clone(),
                    devices: set.devices.clone(),
                }),
        );
        let lsp: Vec<crate::lsp::LspServer> = [layers.operator.as_ref(), layers.project.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|set| set.lsp.iter().cloned())
            .collect();
        let style: Vec<crate::style::StyleRule> =
            [layers.operator.as_ref(), layers.project.as_ref()]
                .into_iter()
                .flatten()
                .flat_map(|set| set.style.iter().cloned())
                .collect();
        let org = match layers.org {
            Org::Absent => OrgLayer::Absent,
            Org::Rules(set) => OrgLayer::Rules(Layer::new(set)),
            Org::Unreadable { path, reason } => OrgLayer::Unreadable { path, reason },
        };
        let operator = layers.operator.map(Layer::new);
        let project = layers.project.map(Layer::new);
        let defaults = Layer::new(RuleSet::new(defaults::rules()));
        let org_layer = match &org {
            OrgLayer::Rules(l) => Some(l),
            _ => None,
        };
        let merged = Arc::new(Merged::build([
            rules_of(org_layer),
            rules_of(operator.as_ref()),
            rules_of(project.as_ref()),
            defaults.rules.as_slice(),
        ]));
        Policy {
            merged,
            org,
            operator,
            project,
            defaults,
            promises: Vec::new(),
            next_promise: 1,
            project_file: layers.project_file,
            operator_file: layers.operator_file,
            router: net::effective(org_net.router, op_net.router, pr_net.router),
            background: net::effective(org_net.background, op_net.background, pr_net.background),
            resolver: net::effective_resolver(org_net.resolver, op_net.resolver, pr_net.resolver),
            resolver_ports: net::resolver_ports(pr_net.resolver_ports.or(op_net.resolver_ports)),
            secrets: secrets.into(),
            unread: unread.into(),
            mcp,
            plugins: plugins.into(),
            beside,
            lsp: lsp.into(),
            style: style.into(),
        }
    }

    /// The plugins config.zon and chock.zon enable, the operator's first.
    pub fn plugins(&self) -> &[String] {
        &self.plugins
    }

    /// The paths the project's `.workspace` block binds beside the
    /// worktree, in file order.
    pub fn workspace_binds(&self) -> &[crate::binds::WorkspaceBind] {
        &self.beside.binds
    }

    /// The devices the project's `.devices` block names, in file order.
    pub fn named_devices(&self) -> &[crate::devices::NamedDevice] {
        &self.beside.devices
    }

    /// The secret named `name`, as the operator's config.zon names it, else
    /// the project's chock.zon.
    pub fn secret(&self, name: &str) -> Option<&crate::SecretSpec> {
        self.secrets.iter().find(|s| s.name == name)
    }

    /// Every secret the files name, the operator's first.
    pub fn secrets(&self) -> &[crate::SecretSpec] {
        &self.secrets
    }

    /// The top-level blocks of the policy files that Chock does not act on,
    /// each `<file>:<line>:<column>: <what>`.
    pub fn unread_blocks(&self) -> &[String] {
        &self.unread
    }

    /// The MCP servers the operator's config.zon and the project's
    /// chock.zon name (an org bundle names none: it is a ceiling of rules).
    pub fn mcp_servers(&self) -> &crate::mcp::McpServers {
        &self.mcp
    }

    /// The language servers the operator's config.zon and the project's
    /// chock.zon name, the operator's first.
    pub fn lsp_servers(&self) -> &[crate::lsp::LspServer] {
        &self.lsp
    }

    /// The style rules the operator's config.zon and the project's
    /// chock.zon hold, the operator's first.
    pub fn style_rules(&self) -> &[crate::style::StyleRule] {
        &self.style
    }

    /// A policy with no file at all: the shipped defaults alone.
    pub fn shipped() -> Policy {
        Policy::new(Layers::default())
    }

    pub(crate) fn person(&self, action: &str) -> PersonAnswer<'_> {
        let op = self.operator.as_ref().and_then(|l| l.best(action));
        let pr = self.project.as_ref().and_then(|l| l.best(action));
        let pick = |layer, rule| pick(layer, rule, action);
        match (op, pr) {
            (Some(o), Some(p)) => {
                let (o_answer, p_answer) =
                    (pick(LayerKind::Operator, o), pick(LayerKind::Project, p));
                if o_answer.decision < p_answer.decision {
                    o_answer
                } else {
                    p_answer
                }
            }
            (Some(o), None) => pick(LayerKind::Operator, o),
            (None, Some(p)) => pick(LayerKind::Project, p),
            (None, None) => match self.defaults.best(action) {
                Some(d) => pick(LayerKind::Default, d),
                None => PersonAnswer {
                    decision: Decision::Ask,
                    layer: LayerKind::None,
                    rule: None,
                    serve_capped: false,
                },
            },
        }
    }

    /// The decision for a dotted name, with no explanation: the hot path.
    pub(crate) fn decision_str(&self, action: &str) -> Decision {
        if matches!(self.org, OrgLayer::Unreadable { .. }) {
            return Decision::Deny;
        }
        let [org, op, pr, def] = self.merged.best(action);
        let get = |layer: &Option<Arc<Layer>>, id: Option<u32>| {
            id.and_then(|i| {
                layer
                    .as_ref()
                    .map(|l| effective(&l.rules[i as usize], action).0)
            })
        };
        let mut d = match (get(&self.operator, op), get(&self.project, pr)) {
            (Some(o), Some(p)) => o.min(p),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => def.map_or(Decision::Ask, |i| {
                effective(&self.defaults.rules[i as usize], action).0
            }),
        };
        if let (OrgLayer::Rules(l), Some(i)) = (&self.org, org) {
            d = d.min(l.rules[i as usize].decision);
        }
        for p in &self.promises {
            if let Some(r) = p.layer.best(action) {
                d = d.min(r.decision);
            }
        }
        d
    }

    /// The decision for `action`, with no explanation.
    pub fn decision(&self, action: &crate::Action) -> Decision {
        self.decision_str(action.as_str())
    }

    /// Adds a promise: a layer that only narrows, in force from the next
    /// question on. Returns its id for [`Policy::widen`].
    pub fn restrict(&mut self, rules: Vec<Rule>) -> PromiseId {
        let id = PromiseId(self.next_promise);
        self.next_promise += 1;
        self.promises.push(Promise {
            id,
            layer: Layer::new(RuleSet::new(rules)),
            inherited: false,
        });
        id
    }

    /// The promises in force, oldest first, with whether each came from a
    /// parent session.
    pub fn promises(&self) -> Vec<(PromiseId, bool)> {
        self.promises.iter().map(|p| (p.id, p.inherited)).collect()
    }

    /// Leaves promise `id`. Leaving is itself the action `policy.widen`:
    /// allow lets it go, deny never does, and any other answer needs
    /// `approved` (a person's or reviewer's yes the caller obtained).
    /// A promise inherited from a parent session is never left.
    pub fn widen(&mut self, id: PromiseId, approved: bool) -> Result<(), WidenError> {
        let pos = self
            .promises
            .iter()
            .position(|p| p.id == id)
            .ok_or(WidenError::NoSuchPromise(id))?;
        if self.promises[pos].inherited {
            return Err(WidenError::Inherited(id));
        }
        match self.decision(&crate::Action::policy_widen()) {
            Decision::Allow => {}
            Decision::Deny => return Err(WidenError::Denied(id)),
            decision if !approved => return Err(WidenError::NotApproved { id, decision }),
            _ => {}
        }
        self.promises.remove(pos);
        Ok(())
    }

    /// The policy a subagent gets: its parent's whole fold, with every
    /// promise made so far fixed in place, so the child can narrow further
    /// but never widen what its parent had.
    pub fn for_subagent(&self) -> Policy {
        let mut child = self.clone();
        for p in &mut child.promises {
            p.inherited = true;
        }
        child
    }

    /// The `.policy.net.router` word in force (project, else operator, else
    /// `.auto`, capped by the org bundle's).
    pub fn net_router_mode(&self) -> NetMode {
        self.router
    }

    /// The `.policy.net.background` word in force, read like the router's.
    pub fn net_background_mode(&self) -> NetMode {
        self.background
    }

    /// The `.policy.net.resolver` word in force (project, else operator,
    /// else `.none`, capped by the org bundle's).
    pub fn net_resolver(&self) -> ResolverMode {
        self.resolver
    }

    /// The ports a fake address listens on: 80, 443 and the project's
    /// `.resolver_ports` (else the operator's), sorted, each once.
    pub fn net_resolver_ports(&self) -> &[u16] {
        &self.resolver_ports
    }

    /// Whether the session is given a router: `.filtered` always, `.none`
    /// never, `.auto` only where some rule permits a host under net.connect
    /// (a rule that only denies does not build one).
    pub fn wants_router(&self) -> bool {
        match self.router {
            NetMode::None => false,
            NetMode::Filtered => true,
            NetMode::Auto => self.permits_any("net.connect"),
        }
    }

    /// Whether a background command gets a router: `.none` never, `.auto`
    /// whatever the session has, `.filtered` always (still capped by `.none`
    /// for the session).
    pub fn background_wants_router(&self) -> bool {
        match self.background {
            NetMode::None => false,
            NetMode::Auto => self.wants_router(),
            NetMode::Filtered => self.router != NetMode::None,
        }
    }

    /// Whether a command gets a router: a foreground one per
    /// `.policy.net.router`; a background one per `.policy.net.background`,
    /// or, refusing every host ([`Self::background_refusal`]), where some
    /// rule could publish a port from it. The one rule a session and `chock
    /// sandbox --net` share.
    pub fn command_gets_router(&self, background: bool) -> bool {
        if background {
            self.background_wants_router() || self.could_permit("net.serve")
        } else {
            self.wants_router()
        }
    }

    /// Why every connection of a background command is refused, when its
    /// router is there only to publish ports: `None` where the policy gives
    /// background commands a network.
    pub fn background_refusal(&self) -> Option<String> {
        (!self.background_wants_router()).then(|| {
            format!(
                "a background command has no network here: .policy.net.background is .{}; \
                 run it in the foreground, or set .policy.net.background in chock.zon",
                self.background.word()
            )
        })
    }

    fn person_rules(&self) -> impl Iterator<Item = &Rule> {
        let op = self.operator.iter().flat_map(|l| l.rules.iter());
        let pr = self.project.iter().flat_map(|l| l.rules.iter());
        op.chain(pr).chain(self.defaults.rules.iter())
    }

    /// Whether some rule naming something in `prefix` (or a class covering
    /// all of it) could lead to at least `at_least` once every layer is
    /// folded in. A catch-all names nothing, so it does not count. A class
    /// is tried on a name under it that no exact rule mentions, which stands
    /// for the whole class.
    pub fn could_reach(&self, prefix: &str, at_least: Decision) -> bool {
        // '\u{1}' is in no segment any builder accepts, so no exact rule names it.
        let covers = |p: &str| {
            prefix.len() > p.len() && prefix.starts_with(p) && prefix.as_bytes()[p.len()] == b'.'
        };
        self.person_rules().any(|r| {
            let name = match &r.pattern {
                Pattern::Exact(a) if r.pattern.within(prefix) => a.as_str().to_owned(),
                Pattern::Class(p) if r.pattern.within(prefix) => format!("{p}.\u{1}"),
                Pattern::Class(p) if covers(p) => format!("{prefix}.\u{1}"),
                _ => return false,
            };
            self.decision_str(&name) >= at_least
        })
    }

    /// Whether anything under `prefix` could be permitted, by a rule or by a
    /// person's yes: the serve_port tool is offered only where
    /// `could_permit("net.serve")`.
    pub fn could_permit(&self, prefix: &str) -> bool {
        self.could_reach(prefix, Decision::AgentThenHuman)
    }

    /// Whether everything under `prefix` is denied: the class folds to deny
    /// and no rule naming something in it could permit it (`mcp.*` deny
    /// starts no server; `mcp.<server>.tool.*` deny starts not that one).
    pub fn denies_every(&self, prefix: &str) -> bool {
        self.decision_str(&format!("{prefix}.\u{1}")) == Decision::Deny
            && !self.could_permit(prefix)
    }

    /// Whether some rule permits something under `prefix` outright.
    pub fn permits_any(&self, prefix: &str) -> bool {
        self.could_reach(prefix, Decision::Allow)
    }

    /// The ports published at session start: every exact
    /// `net.serve.<port>` rule that folds to allow.
    pub fn published_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self
            .person_rules()
            .filter_map(|r| match &r.pattern {
                Pattern::Exact(a) => a.as_str().strip_prefix("net.serve.")?.parse().ok(),
                _ => None,
            })
            .filter(|port| self.decision_str(&format!("net.serve.{port}")) == Decision::Allow)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }
}
