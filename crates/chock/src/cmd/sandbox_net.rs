//! `chock sandbox --net`: the router a session's commands get, decided by
//! the workspace's policy, for a person to try a command with it. Kept out
//! of `sandbox.rs` so the sandbox's own flags and the network's stay apart.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::Context;
use chock_policy::{Policy, ResolverMode};
use chock_sandbox::SandboxSpec;
use chock_sandbox::net::{
    Decider, FakeConfig, PolicyDecider, Proxy, ProxyConfig, RouterLink, RouterThread,
};

/// The network flags of `chock sandbox`.
#[derive(Debug, Default, PartialEq, Eq, clap::Args)]
pub(crate) struct NetArgs {
    /// Give the command the network a session's command gets: a router
    /// when the workspace's policy permits a host (.policy.net.router), each
    /// connection decided at net.connect.<reversed host>, and the ports
    /// net.serve.<port> allows published on 127.0.0.1. Nobody is asked
    /// here: a host that would ask is refused, with the rule to add.
    #[arg(long)]
    net: bool,

    /// With --net: decide as for a background command
    /// (.policy.net.background; only what is allowed outright).
    #[arg(long, requires = "net")]
    background: bool,

    /// With --net, for testing the router: resolve NAME to ADDR without
    /// DNS (the internal-address check still applies: a rule must name
    /// ADDR if it is loopback or private). Repeatable.
    #[arg(long, requires = "net", value_name = "NAME=ADDR", value_parser = parse_resolve)]
    resolve: Vec<(String, IpAddr)>,

    /// With --net: also run the fake-address resolver, for tools that
    /// ignore the proxy variables, whatever .policy.net.resolver says. Names
    /// looked up inside get addresses in 127.77.0.0/16 that accept ports 80,
    /// 443 and .policy.net.resolver_ports; each connection is decided at
    /// net.connect.<reversed host> of the name asked for.
    #[arg(long, requires = "net")]
    fake_resolver: bool,
}

impl NetArgs {
    /// Whether the command asked for a network at all.
    pub(crate) fn wanted(&self) -> bool {
        self.net
    }
}

fn parse_resolve(s: &str) -> Result<(String, IpAddr), String> {
    let (name, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=ADDR"))?;
    let addr = addr
        .parse()
        .map_err(|_| format!("{addr:?} is not an IP address"))?;
    Ok((name.to_owned(), addr))
}

/// What `prepare` decided: the policy when a router is wanted.
pub(crate) struct NetPlan {
    policy: Arc<Policy>,
    background: bool,
    resolve: Vec<(String, IpAddr)>,
    /// The ports fake addresses accept, when the fake resolver runs.
    fake: Option<Vec<u16>>,
}

/// Reads the policy and, when it wants a router, gives `spec` one.
pub(crate) fn prepare(
    args: &NetArgs,
    workspace: &std::path::Path,
    spec: SandboxSpec,
) -> anyhow::Result<(SandboxSpec, Option<NetPlan>)> {
    if !args.net {
        return Ok((spec, None));
    }
    let policy = Policy::load(workspace)
        .with_context(|| format!("reading the policy for {}", workspace.display()))?;
    if !policy.command_gets_router(args.background) {
        let (key, mode) = if args.background {
            ("background", policy.net_background_mode())
        } else {
            ("router", policy.net_router_mode())
        };
        let ports = if args.background || policy.published_ports().is_empty() {
            String::new()
        } else {
            "; net.serve.<port> is published only for a background command (--background)"
                .to_owned()
        };
        eprintln!(
            "chock: no router: .policy.net.{key} is .{} and no rule permits a host under net.connect; the command has loopback only{ports}",
            mode.word()
        );
        return Ok((spec, None));
    }
    let fake = (args.fake_resolver || policy.net_resolver() == ResolverMode::Fake)
        .then(|| policy.net_resolver_ports().to_vec());
    let spec = if fake.is_some() {
        spec.with_fake_resolver()
    } else {
        spec.with_router()
    };
    Ok((
        spec,
        Some(NetPlan {
            policy: Arc::new(policy),
            background: args.background,
            resolve: args.resolve.clone(),
            fake,
        }),
    ))
}

/// Starts the router for a spawned child; prints what was not published.
pub(crate) fn start(plan: NetPlan, link: RouterLink) -> anyhow::Result<RouterThread> {
    let ports = plan.policy.published_ports();
    let decider: Arc<dyn Decider> = if plan.background {
        Arc::new(PolicyDecider::background(Arc::clone(&plan.policy)))
    } else {
        Arc::new(PolicyDecider::foreground(Arc::clone(&plan.policy), None))
    };
    let config = ProxyConfig {
        resolve_overrides: plan.resolve,
        ..ProxyConfig::default()
    };
    let fake = plan.fake.map(|ports| FakeConfig {
        ports,
        ..FakeConfig::default()
    });
    let (thread, results) = RouterThread::start(link, Proxy::new(decider, config), &ports, fake)
        .context("starting the sandbox's router")?;
    for r in results {
        match r {
            Ok(p) => eprintln!("chock: published 127.0.0.1:{p}"),
            Err(e) => eprintln!("chock: {e}"),
        }
    }
    Ok(thread)
}
