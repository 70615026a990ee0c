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

/// fetch_url's answer for the page at `path` of `site`.
async fn fetch_page(web: &Web, policy: &Policy, site: &Site, path: &str) -> ToolOutput {
    fetch_text(web, policy, &format!("{}{path}", site.url())).await
}

/// Fails, showing the text, unless the text of `out` contains `part`.
#[track_caller]
fn assert_says(out: &ToolOutput, part: &str) {
    assert!(out.text.contains(part), "{}", out.text);
}

/// Fails, showing the text, unless `out` is an error whose text contains
/// `part`.
#[track_caller]
fn assert_refused(out: &ToolOutput, part: &str) {
    assert!(out.is_error, "{}", out.text);
    assert_says(out, part);
}

/// Fails, showing the text, unless `out` is no error and its text ends with
/// `end`.
#[track_caller]
fn assert_read(out: &ToolOutput, end: &str) {
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.ends_with(end), "{}", out.text);
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
    let out = fetch_page(&web, &policy, &site, "/").await;
    assert_read(&out, "# T\n\nHello [there](/b)");
    assert!(
        out.text
            .starts_with(&format!("url: {}/\nstatus: 200\n", site.url())),
        "{}",
        out.text
    );
    let plain = fetch_page(&web, &policy, &site, "/plain").await;
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
    let out = fetch_page(&web, &wide, &site, "/").await;
    assert_refused(&out, "only a rule that names the address");
    assert_says(
        &out,
        ".{ .action = \"net.fetch.127.0.0.1\", .decision = .allow }",
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
    let same = fetch_page(&web, &policy, &site, "/same").await;
    assert_read(&same, "arrived");
    assert_says(&same, "redirected from: ");

    let away = fetch_page(&web, &policy, &site, "/away").await;
    assert_refused(
        &away,
        "net.fetch.invalid.elsewhere is deny there, by the rule .{ .action = \"net.fetch.invalid.*\", .decision = .deny }",
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
    let out = fetch_page(&web, &allow_loopback(), &site, "/away").await;
    assert_refused(&out, "is ask there, by no rule names it");
    assert_says(&out, "to permit it, add this rule");
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
    let out = fetch_page(&web, &policy, &site, "/private/page").await;
    assert_refused(&out, "robots.txt forbids /private/page");
    assert!(!site.requests().contains(&"/private/page".to_owned()));
    let open = fetch_page(&web, &policy, &site, "/public").await;
    assert!(!open.is_error, "{}", open.text);
}

#[tokio::test(flavor = "current_thread")]
async fn a_server_error_on_robots_txt_refuses_the_host() {
    let site = Site::start([("/robots.txt", Page::status(503)), ("/", Page::text("x"))]);
    let out = fetch_page(&Web::default(), &allow_loopback(), &site, "/").await;
    assert_refused(&out, "status 503");
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
    let img = fetch_page(&web, &policy, &site, "/img").await;
    assert_refused(&img, "fetch_url reads text, and this is image/png");
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
    let out = fetch_page(&Web::default(), &allow_loopback(), &site, "/big").await;
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
    let out = fetch_page(&web, &nobody, &site, "/").await;
    assert_read(&out, "local");
    // A name that is not the asked-about address still needs a rule.
    let named = policy(&[("net.fetch.localhost", Decision::Allow)]);
    let hop = fetch_page(&web, &named, &site, "/to-name").await;
    assert_refused(&hop, "fetch_url does not read localhost at ");
}
