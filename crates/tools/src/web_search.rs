//! `web_search`: one query to the search engine the operator named in
//! config.zon (`.search`), decided at `web.search` (which ships as ask).
//!
//! The engine's own host is not decided under `net.fetch`: the operator
//! named it and a project cannot pick it. A result the model then wants to
//! read is an ordinary fetch_url, decided at that page's host. With no
//! engine configured, the tool answers with the block to write, and nobody
//! is asked about a search that could not run.

use std::time::Duration;

use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::time::Instant;

use super::fetch_url::{GetError, Web};
use chock_policy::Action;

use super::{Decide, ToolError, ToolOutput};
use crate::tool::{Offered, Tool};

/// The engine behind `web_search`, told apart by `.kind`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind")]
pub enum SearchConfig {
    /// A SearXNG instance's JSON API.
    #[serde(rename = "searxng")]
    Searxng { base_url: String },
    /// The Brave Search API; `base_url` is for a proxy or a test engine
    /// (default `https://api.search.brave.com`).
    #[serde(rename = "brave")]
    Brave {
        key_env: String,
        #[serde(default)]
        base_url: Option<String>,
    },
}

/// The block the tool shows when no engine is configured.
pub(super) const EXAMPLE_SEARCH: &str = r#".{
    .search = .{ .kind = .searxng, .base_url = "http://127.0.0.1:8888" },
}"#;

/// The Brave Search API, when `.base_url` does not say otherwise.
const BRAVE_URL: &str = "https://api.search.brave.com";

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BYTES: usize = 2 * 1024 * 1024;
const DEFAULT_COUNT: usize = 8;
const MAX_COUNT: usize = 20;

/// Search the web with the search engine the person configured. Returns titles,
/// URLs and snippets; read a result with fetch_url.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to search for
    query: String,
    /// How many results to return (default 8)
    #[schemars(range(min = 1, max = MAX_COUNT))]
    count: Option<usize>,
}

impl Tool for Args {
    const NAME: &'static str = "web_search";

    /// Decided at `web.search` where an engine is configured; elsewhere the
    /// tool answers that there is none.
    fn decided_at(&self, offered: Offered<'_>) -> Decide {
        if offered.search {
            Decide::At(Action::web_search())
        } else {
            Decide::Nothing
        }
    }
}

/// One result, whatever engine it came from.
#[derive(Debug, PartialEq, Eq)]
struct Hit {
    title: String,
    url: String,
    snippet: String,
}

pub(super) async fn run(
    web: &Web,
    engine: Option<&SearchConfig>,
    args: Args,
) -> Result<ToolOutput, ToolError> {
    let Some(engine) = engine else {
        return Err(ToolError::Failed(format!(
            "web_search has no search engine: the person can name one in the operator's config.zon \
             ($XDG_CONFIG_HOME/chock/config.zon), for example\n{EXAMPLE_SEARCH}\n\
             (or .search = .{{ .kind = .brave, .key_env = \"BRAVE_API_KEY\" }}). Until then, use fetch_url on pages you know"
        )));
    };
    let query = args.query.trim();
    if query.is_empty() {
        return Err(ToolError::Failed(
            "the query is empty; say what to search for".to_owned(),
        ));
    }
    let count = args.count.unwrap_or(DEFAULT_COUNT);
    if !(1..=MAX_COUNT).contains(&count) {
        return Err(ToolError::Failed(format!(
            "count must be between 1 and {MAX_COUNT}, not {count}"
        )));
    }
    let (url, key) = request(engine, query, count)?;
    web.trust(&url).map_err(ToolError::Failed)?;
    let headers: Vec<(&str, &str)> = match &key {
        Some(key) => vec![
            ("X-Subscription-Token", key.as_str()),
            ("Accept", "application/json"),
        ],
        None => vec![("Accept", "application/json")],
    };
    let engine_name = match engine {
        SearchConfig::Searxng { .. } => "searxng",
        SearchConfig::Brave { .. } => "brave",
    };
    let fetched = match web
        .get(&url, &headers, MAX_BYTES, Instant::now() + TIMEOUT)
        .await
    {
        Ok(fetched) => fetched,
        Err(GetError::Timeout) => {
            return Err(ToolError::Failed(format!(
                "the search engine ({engine_name}) did not answer within {} s; try again later",
                TIMEOUT.as_secs()
            )));
        }
        Err(GetError::Failed(why)) => {
            return Err(ToolError::Failed(format!(
                "cannot reach the search engine ({engine_name}) at {}: {why}",
                url.origin().ascii_serialization()
            )));
        }
    };
    let body = String::from_utf8_lossy(&fetched.body);
    if !(200..300).contains(&fetched.status) {
        return Err(ToolError::Failed(format!(
            "the search engine ({engine_name}) answered status {}: {}",
            fetched.status,
            chock_providers::excerpt(&body)
        )));
    }
    let hits = parse(engine, &body).map_err(|detail| {
        ToolError::Failed(format!(
            "the search engine ({engine_name}) answered something that is not its JSON: {detail}"
        ))
    })?;
    Ok(ToolOutput::ok(render(query, &hits, count)))
}

/// The request URL for `engine` and the API key it needs, if any.
fn request(
    engine: &SearchConfig,
    query: &str,
    count: usize,
) -> Result<(Url, Option<String>), ToolError> {
    let bad = |base: &str, err: String| {
        ToolError::Failed(format!(
            "the search engine's base_url '{base}' in config.zon is not a URL: {err}"
        ))
    };
    match engine {
        SearchConfig::Searxng { base_url } => {
            let mut url = Url::parse(&format!("{}/search", base_url.trim_end_matches('/')))
                .map_err(|err| bad(base_url, err.to_string()))?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            Ok((url, None))
        }
        SearchConfig::Brave { key_env, base_url } => {
            let base = base_url.as_deref().unwrap_or(BRAVE_URL);
            let key = std::env::var(key_env).ok().filter(|k| !k.is_empty()).ok_or_else(|| {
                ToolError::Failed(format!(
                    "the search engine (brave) takes its key from ${key_env}, which is not set in chock's environment"
                ))
            })?;
            let mut url = Url::parse(&format!("{}/res/v1/web/search", base.trim_end_matches('/')))
                .map_err(|err| bad(base, err.to_string()))?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &count.to_string());
            Ok((url, Some(key)))
        }
    }
}

fn parse(engine: &SearchConfig, body: &str) -> Result<Vec<Hit>, String> {
    let value: Value = serde_json::from_str(body).map_err(|err| err.to_string())?;
    let (list, snippet_key) = match engine {
        SearchConfig::Searxng { .. } => (&value["results"], "content"),
        SearchConfig::Brave { .. } => (&value["web"]["results"], "description"),
    };
    let Some(list) = list.as_array() else {
        // Brave leaves out `web` when nothing matched.
        if matches!(engine, SearchConfig::Brave { .. }) && value.get("web").is_none() {
            return Ok(Vec::new());
        }
        return Err("it has no list of results".to_owned());
    };
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or("").trim().to_owned();
    Ok(list
        .iter()
        .map(|hit| Hit {
            title: text(hit, "title"),
            url: text(hit, "url"),
            snippet: text(hit, snippet_key),
        })
        .filter(|hit| !hit.url.is_empty())
        .collect())
}

fn render(query: &str, hits: &[Hit], count: usize) -> String {
    if hits.is_empty() {
        return format!("no results for \"{query}\"");
    }
    let mut out = format!("results for \"{query}\":\n");
    for (n, hit) in hits.iter().take(count).enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", n + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet.replace('\n', " ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use chock_testkit::{Page, Site};

    use super::*;

    fn args(query: &str) -> Args {
        Args {
            query: query.to_owned(),
            count: None,
        }
    }

    /// The answer to a search for "q" with `engine`.
    async fn search_q(engine: &SearchConfig) -> Result<ToolOutput, ToolError> {
        run(&Web::default(), Some(engine), args("q")).await
    }

    /// A Brave engine at `site` whose key is in the variable `key_env`.
    fn brave(key_env: &str, site: &Site) -> SearchConfig {
        SearchConfig::Brave {
            key_env: key_env.to_owned(),
            base_url: Some(site.url()),
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_searxng_engine_answers_with_numbered_results() {
        let site = Site::start([(
            "/search",
            Page::new(
                "application/json",
                r#"{"results":[{"title":"Zig","url":"https://ziglang.org/","content":"A language"},
                               {"title":"No url"},
                               {"title":"Docs","url":"https://ziglang.org/documentation/","content":""}]}"#,
            ),
        )]);
        let engine = SearchConfig::Searxng {
            base_url: format!("{}/", site.url()),
        };
        let out = run(&Web::default(), Some(&engine), args("zig & c"))
            .await
            .unwrap();
        assert_eq!(
            out.text,
            "results for \"zig & c\":\n\n1. Zig\n   https://ziglang.org/\n   A language\n\n2. Docs\n   https://ziglang.org/documentation/\n"
        );
        assert_eq!(site.requests(), ["/search?q=zig+%26+c&format=json"]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_brave_engine_sends_its_key() {
        let site = Site::start([(
            "/res/v1/web/search",
            Page::new(
                "application/json",
                r#"{"web":{"results":[{"title":"R","url":"https://r.example/","description":"d"}]}}"#,
            ),
        )]);
        let out = search_q(&brave("PATH", &site)).await.unwrap();
        assert!(
            out.text.contains("1. R\n   https://r.example/\n   d"),
            "{}",
            out.text
        );
        let missing = brave("CHOCK_TEST_NO_SUCH_KEY", &site);
        let err = search_q(&missing).await.unwrap_err();
        assert!(err.to_string().contains("$CHOCK_TEST_NO_SUCH_KEY"), "{err}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn no_engine_says_what_to_write() {
        let err = run(&Web::default(), None, args("q")).await.unwrap_err();
        assert!(err.to_string().contains(EXAMPLE_SEARCH), "{err}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn an_engine_that_fails_is_reported() {
        let site = Site::start([
            ("/search", Page::new("text/plain", "overloaded")),
            ("/down/search", Page::status(502)),
        ]);
        let engine = SearchConfig::Searxng {
            base_url: site.url(),
        };
        let err = search_q(&engine).await.unwrap_err();
        assert!(err.to_string().contains("not its JSON"), "{err}");
        let down = SearchConfig::Searxng {
            base_url: format!("{}/down", site.url()),
        };
        let err = search_q(&down).await.unwrap_err();
        assert!(err.to_string().contains("status 502"), "{err}");
    }
}
