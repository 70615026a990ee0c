//! net.fetch, net.connect, net.serve, the router and background commands.

use pretty_assertions::assert_eq;

use super::prelude::*;

#[test]
fn net_fetch_hosts_are_reversed_so_a_class_is_safe() {
    let p = project(&[
        (Some("net.fetch.org.ziglang.*"), Allow),
        (Some("net.fetch.*"), Deny),
    ]);
    let docs = Action::net_fetch("docs.ziglang.org").unwrap();
    assert_eq!(docs.as_str(), "net.fetch.org.ziglang.docs");
    assert_eq!(p.decision(&docs), Allow);
    assert_eq!(
        p.decision(&Action::net_fetch("ziglang.org.evil.com").unwrap()),
        Deny
    );
    // ziglang.org itself is not *under* ziglang.org.
    assert_eq!(p.decision(&Action::net_fetch("ziglang.org").unwrap()), Deny);
    // A host allowed for one source is not allowed for the others.
    assert_eq!(
        p.decision(&Action::net_connect("docs.ziglang.org").unwrap()),
        Ask
    );
    assert_eq!(
        p.decision(&Action::nix_net("docs.ziglang.org").unwrap()),
        Ask
    );
}

#[test]
fn net_serve_publishes_only_a_port_a_person_wrote() {
    let exact = project(&[(Some("net.serve.3000"), Allow)]);
    assert_eq!(exact.decision(&Action::net_serve(3000).unwrap()), Allow);
    assert_eq!(exact.published_ports(), vec![3000]);
    assert!(exact.could_permit("net.serve"));

    let both = project(&[(Some("net.serve.3000"), Allow), (Some("net.serve.*"), Ask)]);
    assert_eq!(both.decision(&Action::net_serve(3000).unwrap()), Allow);
    assert_eq!(both.decision(&Action::net_serve(8080).unwrap()), Ask);
    assert_eq!(both.published_ports(), vec![3000]);

    let pattern = project(&[(Some("net.serve.*"), Allow)]);
    let v = pattern.decide(&Action::net_serve(8080).unwrap());
    assert_eq!(v.decision, Ask, "net.serve.* publishes nothing");
    assert!(
        v.notes.iter().any(|n| n.contains("publishes nothing")),
        "{}",
        v.render()
    );
    assert!(pattern.published_ports().is_empty());
    assert!(
        pattern.could_permit("net.serve"),
        "serve_port is offered: a person can answer"
    );

    let catch_all = project(&[(None, Allow)]);
    assert_eq!(catch_all.decision(&Action::net_serve(3000).unwrap()), Ask);
    assert!(
        !catch_all.could_permit("net.serve"),
        "a catch-all names no port"
    );

    assert!(
        !Policy::shipped().could_permit("net.serve"),
        "a project that names none is not offered serve_port"
    );
    let denied = project(&[(Some("net.serve.*"), Deny)]);
    assert!(!denied.could_permit("net.serve"));

    let capped = layered(
        &[(Some("net.serve.*"), Deny)],
        &[],
        &[(Some("net.serve.3000"), Allow)],
    );
    assert_eq!(
        capped.decision(&Action::net_serve(3000).unwrap()),
        Deny,
        "an org ceiling still refuses one"
    );
    assert!(capped.published_ports().is_empty());
    assert!(!capped.could_permit("net.serve"));
}

fn with_net(
    rules: &[(Option<&str>, Decision)],
    router: Option<NetMode>,
    background: Option<NetMode>,
) -> Policy {
    let mut set = rs(rules);
    set.net = NetSettings {
        router,
        background,
        ..NetSettings::default()
    };
    Policy::new(Layers {
        project: Some(set),
        ..Layers::default()
    })
}

#[test]
fn a_router_is_a_mechanism_never_a_permission() {
    let github = [(Some("net.connect.com.github"), Allow)];
    assert!(
        with_net(&github, Some(NetMode::Auto), None).wants_router(),
        ".auto with a permitted host"
    );
    assert!(
        with_net(&github, None, None).wants_router(),
        ".auto is the default"
    );
    assert!(
        !with_net(&[], None, None).wants_router(),
        "a project that permits nothing pays for none of it"
    );
    assert!(
        with_net(&[(Some("net.*"), Allow)], None, None).wants_router(),
        "a class over all of net permits something under it"
    );
    assert!(
        !with_net(&[(None, Allow)], None, None).wants_router(),
        "a catch-all names nothing"
    );
    assert!(
        !with_net(&[(Some("net.connect.*"), Deny)], None, None).wants_router(),
        "a rule that only denies"
    );
    assert!(
        !with_net(&[(Some("net.connect.*"), Ask)], None, None).wants_router(),
        "ask permits nothing yet"
    );
    assert!(
        !with_net(&github, Some(NetMode::None), None).wants_router(),
        ".none refuses a router"
    );
    assert!(
        with_net(&[], Some(NetMode::Filtered), None).wants_router(),
        ".filtered gives one anyway"
    );
    // A router grants no host by itself.
    let filtered = with_net(&[], Some(NetMode::Filtered), None);
    assert_eq!(
        filtered.decision(&Action::net_connect("github.com").unwrap()),
        Ask
    );
    assert!(
        !with_net(&github, None, Some(NetMode::None)).background_wants_router(),
        ".background = .none"
    );
    assert!(
        with_net(&github, None, None).background_wants_router(),
        ".background = .auto is the session's"
    );
}

#[test]
fn a_background_command_never_asks() {
    let p = project(&[(Some("net.connect.com.github"), Allow)]);
    let allowed = p.decide_background(&Action::net_connect("github.com").unwrap());
    assert!(allowed.permits() && !allowed.refused());
    let unnamed = p.decide_background(&Action::net_connect("example.com").unwrap());
    assert_eq!(unnamed.decision, Ask);
    assert!(
        unnamed.refused(),
        "a host that would have asked is refused rather than queued"
    );
    assert_eq!(unnamed.timing, Timing::Background);
}

#[test]
fn redirect_hops_and_devices_are_read_without_asking() {
    let p = project(&[
        (Some("net.fetch.org.ziglang.*"), Allow),
        (Some("device.usb.1d50.6018"), Allow),
    ]);
    assert!(
        p.decide_unattended(&Action::net_fetch("docs.ziglang.org").unwrap())
            .permits()
    );
    let hop = p.decide_unattended(&Action::net_fetch("elsewhere.example").unwrap());
    assert!(
        hop.refused(),
        "a hop no rule names is refused: {}",
        hop.render()
    );
    assert!(
        !p.decide(&Action::net_fetch("elsewhere.example").unwrap())
            .refused(),
        "the host the agent named asks"
    );
    assert!(
        p.decide_unattended(&Action::device_usb(0x1d50, 0x6018))
            .permits()
    );
    assert!(
        p.decide_unattended(&Action::device_usb(0x1d50, 0x6019))
            .refused(),
        "ask refuses for a device"
    );
}

#[test]
fn a_deny_further_in_still_refuses_a_published_port() {
    let mut p = project(&[(Some("net.serve.3000"), Allow)]);
    assert_eq!(p.published_ports(), vec![3000]);
    p.restrict(vec![Rule::parse(Some("net.serve.*"), Deny).unwrap()]);
    assert_eq!(p.decision(&Action::net_serve(3000).unwrap()), Deny);
    assert!(p.published_ports().is_empty());
    assert!(!p.could_permit("net.serve"));
}

#[test]
fn the_fake_resolver_is_off_unless_a_file_turns_it_on_and_the_org_caps_it() {
    use chock_policy::{Org, ResolverMode, check_text};
    let read = |text: &str| {
        let checked = check_text(text, None);
        assert_eq!(checked.problems, vec![], "{text}");
        checked.rules
    };
    let on =
        ".{ .policy = .{ .net = .{ .resolver = .fake, .resolver_ports = .{ 22, 443, 8080 } } } }";
    let off = ".{ .policy = .{ .net = .{ .resolver = .none } } }";
    let p = Policy::shipped();
    assert_eq!(p.net_resolver(), ResolverMode::None, "off by default");
    assert_eq!(p.net_resolver_ports(), &[80, 443]);
    let p = Policy::new(Layers {
        project: Some(read(on)),
        ..Layers::default()
    });
    assert_eq!(p.net_resolver(), ResolverMode::Fake);
    assert_eq!(p.net_resolver_ports(), &[22, 80, 443, 8080]);
    let capped = Policy::new(Layers {
        org: Org::Rules(read(off)),
        project: Some(read(on)),
        ..Layers::default()
    });
    assert_eq!(
        capped.net_resolver(),
        ResolverMode::None,
        "the org word is a ceiling"
    );
    let operator = Policy::new(Layers {
        operator: Some(read(on)),
        project: Some(read(off)),
        ..Layers::default()
    });
    assert_eq!(
        operator.net_resolver(),
        ResolverMode::None,
        "the project's word wins"
    );
    assert_eq!(operator.net_resolver_ports(), &[22, 80, 443, 8080]);
}

#[test]
fn bad_resolver_words_and_ports_are_reported() {
    use chock_policy::check_text;
    let text = ".{ .policy = .{ .net = .{ .resolver = .yes, .resolver_ports = .{ 0, 70000, \"ssh\", 22 } } } }";
    let checked = check_text(text, None);
    let all: Vec<String> = checked.problems.iter().map(ToString::to_string).collect();
    let all = all.join("\n");
    assert!(all.contains(".resolver takes .none or .fake"), "{all}");
    assert_eq!(
        all.matches("a port in .resolver_ports is a number from 1 to 65535")
            .count(),
        3,
        "{all}"
    );
    assert_eq!(checked.rules.net.resolver_ports, Some(vec![22]));
    let many = format!(
        ".{{ .policy = .{{ .net = .{{ .resolver_ports = .{{ {} }} }} }} }}",
        (1..=17)
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let checked = check_text(&many, None);
    assert_eq!(checked.problems.len(), 1, "{:?}", checked.problems);
    assert!(checked.problems[0].to_string().contains("at most 16"));
}
