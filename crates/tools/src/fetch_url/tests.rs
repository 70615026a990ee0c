//! fetch_url against real sockets: sites on 127.0.0.1 (chock-testkit's
//! `Site`), with the project's rules naming the address, as the policy
//! requires for a loopback address.

use std::time::Duration;

use chock_policy::{Decision, Layers, Policy, Rule, RuleSet};
use chock_testkit::{Page, Site};

use serde_json::json;

use super::*;
use crate::Decide;
use crate::tool::{Offered, Tool};

/// The action of a call with these arguments, as the turn parses them.
fn action_of(arguments: &str) -> Option<Action> {
    let args: Args = serde_json::from_str(arguments).ok()?;
    match args.decided_at(Offered::default()) {
        Decide::At(action) => Some(action),
        _ => None,
    }
}

fn policy(rules: &[(&str, Decision)]) -> Policy {
    let rules = rules
        .iter()
        .map(|(action, decision)| Rule::parse(Some(action), *decision).unwrap())
        .collect();
    Policy::new(Layers {
        project: Some(RuleSet::new(rules)),
        ..Layers::default()
    })
}

fn allow_loopback() -> Policy {
    policy(&[("net.fetch.127.0.0.1", Decision::Allow)])
}

async fn fetch_text(web: &Web, policy: &Policy, url: &str) -> ToolOutput {
    run(
        web,
        policy,
        Args {
            url: url.to_owned(),
            timeout_secs: Some(5),
        },
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn an_allowed_page_comes_back_as_text() {
    let site = Site::start([
        (
            "/",
            Page::html("<title>T</title><p>Hello <a href=\"/b\">there</a></p>"),
        ),
        ("/plain", Page::text("just text")),
    ]);
    let web = Web::default();
    let policy = allow_loopback();
    let out = fetch_text(&web, &policy, &format!("{}/", site.url())).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .starts_with(&format!("url: {}/\nstatus: 200\n", site.url())),
        "{}",
        out.text
    );
    assert!(
        out.text.ends_with("# T\n\nHello [there](/b)"),
        "{}",
        out.text
    );
    let plain = fetch_text(&web, &policy, &format!("{}/plain", site.url())).await;
    assert!(plain.text.ends_with("\njust text"), "{}", plain.text);
    // robots.txt was asked for once for the two pages.
    let robots = site
        .requests()
        .iter()
        .filter(|p| *p == "/robots.txt")
        .count();
    assert_eq!(robots, 1, "{:?}", site.requests());
    // The decision on the address is recorded.
    match out.effect {
        Some(Effect::Decisions(verdicts)) => {
            assert_eq!(verdicts[0].action, "net.fetch.127.0.0.1");
        }
        other => panic!("no decisions: {other:?}"),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn loopback_needs_a_rule_that_names_the_address() {
    let site = Site::start([("/", Page::text("secret"))]);
    let web = Web::default();
    let wide = policy(&[("net.fetch.*", Decision::Allow)]);
    let out = fetch_text(&web, &wide, &format!("{}/", site.url())).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("only a rule that names the address"),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains(".{ .action = \"net.fetch.127.0.0.1\", .decision = .allow }"),
        "{}",
        out.text
    );
    assert!(
        site.requests().is_empty(),
        "nothing was sent: {:?}",
        site.requests()
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_redirect_to_an_unallowed_host_is_refused_naming_the_rule() {
    let site = Site::start([
        ("/same", Page::redirect("/final")),
        ("/final", Page::text("arrived")),
        ("/away", Page::redirect("http://elsewhere.invalid/x")),
    ]);
    let web = Web::default();
    let policy = policy(&[
        ("net.fetch.127.0.0.1", Decision::Allow),
        ("net.fetch.invalid.*", Decision::Deny),
    ]);
    let same = fetch_text(&web, &policy, &format!("{}/same", site.url())).await;
    assert!(!same.is_error, "{}", same.text);
    assert!(same.text.contains("redirected from: "), "{}", same.text);
    assert!(same.text.ends_with("arrived"), "{}", same.text);

    let away = fetch_text(&web, &policy, &format!("{}/away", site.url())).await;
    assert!(away.is_error);
    assert!(
        away.text.contains("net.fetch.invalid.elsewhere is deny there, by the rule .{ .action = \"net.fetch.invalid.*\", .decision = .deny }"),
        "{}",
        away.text
    );
    let Some(Effect::Decisions(verdicts)) = away.effect else {
        panic!("the hop's decision is kept for the log");
    };
    assert!(
        verdicts
            .iter()
            .any(|v| v.action == "net.fetch.invalid.elsewhere")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_unnamed_hop_is_refused_not_asked() {
    let site = Site::start([(
        "/away",
        Page::redirect("http://nobody-named-this.example/x"),
    )]);
    let web = Web::default();
    let out = fetch_text(&web, &allow_loopback(), &format!("{}/away", site.url())).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("is ask there, by no rule names it"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("to permit it, add this rule"),
        "{}",
        out.text
    );
}

#[tokio::test(flavor = "current_thread")]
async fn robots_txt_is_honoured() {
    let site = Site::start([
        (
            "/robots.txt",
            Page::text("User-agent: *\nDisallow: /private\n"),
        ),
        ("/private/page", Page::text("hidden")),
        ("/public", Page::text("open")),
    ]);
    let web = Web::default();
    let policy = allow_loopback();
    let out = fetch_text(&web, &policy, &format!("{}/private/page", site.url())).await;
    assert!(out.is_error);
    assert!(
        out.text.contains("robots.txt forbids /private/page"),
        "{}",
        out.text
    );
    assert!(!site.requests().contains(&"/private/page".to_owned()));
    let open = fetch_text(&web, &policy, &format!("{}/public", site.url())).await;
    assert!(!open.is_error, "{}", open.text);
}

#[tokio::test(flavor = "current_thread")]
async fn a_server_error_on_robots_txt_refuses_the_host() {
    let site = Site::start([("/robots.txt", Page::status(503)), ("/", Page::text("x"))]);
    let out = fetch_text(
        &Web::default(),
        &allow_loopback(),
        &format!("{}/", site.url()),
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.contains("status 503"), "{}", out.text);
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_server_times_out() {
    let site = Site::start([("/slow", Page::text("late").after(Duration::from_secs(10)))]);
    let started = std::time::Instant::now();
    let out = run(
        &Web::default(),
        &allow_loopback(),
        Args {
            url: format!("{}/slow", site.url()),
            timeout_secs: Some(1),
        },
    )
    .await;
    assert!(out.is_error);
    assert!(out.text.starts_with("timed out after 1 s"), "{}", out.text);
    assert!(started.elapsed() < Duration::from_secs(8));
}

#[tokio::test(flavor = "current_thread")]
async fn binary_and_bad_urls_are_refused_with_a_reason() {
    let site = Site::start([("/img", Page::new("image/png", vec![0x89, b'P', 0, 0]))]);
    let web = Web::default();
    let policy = allow_loopback();
    let img = fetch_text(&web, &policy, &format!("{}/img", site.url())).await;
    assert!(img.is_error);
    assert!(
        img.text
            .contains("fetch_url reads text, and this is image/png"),
        "{}",
        img.text
    );
    for (url, says) in [
        ("ftp://x.org/a", "http and https only"),
        ("not a url", "is not a URL"),
        ("http://user:pw@x.org/", "sends no credential"),
    ] {
        let out = fetch_text(&web, &policy, url).await;
        assert!(
            out.is_error && out.text.contains(says),
            "{url}: {}",
            out.text
        );
        assert_eq!(action_of(&json!({"url": url}).to_string()), None, "{url}");
    }
}

#[test]
fn the_action_is_the_reversed_host() {
    let action = action_of(r#"{"url":"https://Docs.ZigLang.org/x?y"}"#).unwrap();
    assert_eq!(action.as_str(), "net.fetch.org.ziglang.docs");
    assert_eq!(
        action_of(r#"{"url":"http://127.0.0.1:8080/"}"#)
            .unwrap()
            .as_str(),
        "net.fetch.127.0.0.1"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_huge_page_is_cut_at_the_size_bound() {
    let body = "a".repeat(MAX_BYTES + 1000);
    let site = Site::start([("/big", Page::text(&body))]);
    let out = fetch_text(
        &Web::default(),
        &allow_loopback(),
        &format!("{}/big", site.url()),
    )
    .await;
    assert!(!out.is_error, "{}", &out.text[..200]);
    assert!(out.text.ends_with("only that much was read]"));
    assert!(out.is_truncated(), "the model sees a cut version");
}

#[tokio::test(flavor = "current_thread")]
async fn a_loopback_address_a_person_was_asked_about_is_read() {
    // With no rule, net.fetch.127.0.0.1 asks; the call runs only after a
    // yes, and that yes named the address.
    let site = Site::start([
        ("/", Page::text("local")),
        ("/to-name", Page::redirect("http://localhost/")),
    ]);
    let web = Web::default();
    let nobody = policy(&[]);
    let out = fetch_text(&web, &nobody, &format!("{}/", site.url())).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with("local"), "{}", out.text);
    // A name that is not the asked-about address still needs a rule.
    let named = policy(&[("net.fetch.localhost", Decision::Allow)]);
    let hop = fetch_text(&web, &named, &format!("{}/to-name", site.url())).await;
    assert!(hop.is_error);
    assert!(
        hop.text.contains("fetch_url does not read localhost at "),
        "{}",
        hop.text
    );
}
