//! robots.txt as RFC 9309 reads it: the group for our product token
//! (`chock`) when there is one, else the `*` group; the longest matching
//! `Allow` or `Disallow` pattern decides, with `Allow` winning a tie;
//! `*` matches any run of characters and a trailing `$` anchors the end.
//!
//! Parsing is forgiving in the way the RFC asks (unknown lines and lines
//! without a colon are skipped), so a sloppy file still yields its rules.

/// The product token fetch_url matches groups against.
pub(super) const AGENT: &str = "chock";

/// The rules that apply to fetch_url on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Robots {
    rules: Vec<Rule>,
    /// Where the rules came from, for a refusal: the robots.txt URL, or why
    /// everything is refused.
    source: Source,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    allow: bool,
    pattern: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    File(String),
    /// The file could not be read; RFC 9309 reads that as "disallow all".
    Unreachable {
        url: String,
        why: String,
    },
}

impl Robots {
    /// Everything allowed: no robots.txt (a 4xx answer).
    pub(super) fn allow_all(url: &str) -> Self {
        Self {
            rules: Vec::new(),
            source: Source::File(url.to_owned()),
        }
    }

    /// Everything refused: robots.txt could not be read.
    pub(super) fn unreachable(url: &str, why: String) -> Self {
        Self {
            rules: vec![Rule {
                allow: false,
                pattern: "/".to_owned(),
            }],
            source: Source::Unreachable {
                url: url.to_owned(),
                why,
            },
        }
    }

    /// The rules of `text`, fetched from `url`, that apply to [`AGENT`].
    pub(super) fn parse(url: &str, text: &str) -> Self {
        let mut ours: Vec<Rule> = Vec::new();
        let mut anyone: Vec<Rule> = Vec::new();
        // A group that names us counts as ours even with no rule in it.
        let mut ours_named = false;
        // The agents of the group being read, and whether the last line
        // was a user-agent line (consecutive ones share one group).
        let mut agents: Vec<String> = Vec::new();
        let mut in_agents = false;
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        agents.clear();
                    }
                    in_agents = true;
                    let token = value
                        .split(['/', ' '])
                        .next()
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    ours_named |= token == AGENT;
                    agents.push(token);
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if value.is_empty() {
                        continue;
                    }
                    let rule = Rule {
                        allow: key == "allow",
                        pattern: value.to_owned(),
                    };
                    if agents.iter().any(|a| a == AGENT) {
                        ours.push(rule.clone());
                    }
                    if agents.iter().any(|a| a == "*") {
                        anyone.push(rule);
                    }
                }
                _ => in_agents = false,
            }
        }
        Self {
            rules: if ours_named { ours } else { anyone },
            source: Source::File(url.to_owned()),
        }
    }

    /// `Ok` when `path` (path and query, as sent) may be fetched; otherwise
    /// the sentence that says which rule forbids it.
    pub(super) fn check(&self, path: &str) -> Result<(), String> {
        if path == "/robots.txt" {
            return Ok(());
        }
        let best = self
            .rules
            .iter()
            .filter(|rule| matches(&rule.pattern, path))
            .max_by_key(|rule| (rule.pattern.len(), rule.allow));
        match best {
            None => Ok(()),
            Some(rule) if rule.allow => Ok(()),
            Some(rule) => Err(match &self.source {
                Source::File(url) => format!(
                    "{url} forbids {path} (Disallow: {}); fetch_url honours robots.txt, so this page cannot be read",
                    rule.pattern
                ),
                Source::Unreachable { url, why } => format!(
                    "{url} could not be read ({why}); robots.txt that cannot be read forbids every page of the host (RFC 9309), so {path} cannot be read"
                ),
            }),
        }
    }
}

/// Whether `pattern` (with `*` and a final `$`) matches the start of `path`.
fn matches(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            if !path.starts_with(part) {
                return false;
            }
            at = part.len();
            continue;
        }
        let last = i == parts.len() - 1;
        if last && anchored {
            // The last literal must end the path, after `at`.
            return path.len() >= at + part.len() && path.ends_with(part);
        }
        match path[at..].find(part) {
            Some(found) => at += found + part.len(),
            None => return false,
        }
    }
    !anchored || at == path.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://h/robots.txt";

    /// Fails unless the robots.txt `text` allows each path marked true and
    /// forbids each marked false.
    #[track_caller]
    fn assert_allows(text: &str, paths: &[(&str, bool)]) {
        let robots = Robots::parse(URL, text);
        for &(path, allowed) in paths {
            assert_eq!(robots.check(path).is_ok(), allowed, "{path}");
        }
    }

    #[test]
    fn the_star_group_applies_when_none_names_us() {
        let robots = Robots::parse(
            URL,
            "User-agent: other\nDisallow: /\n\nUser-agent: *\nDisallow: /private\nAllow: /private/ok\n",
        );
        assert!(robots.check("/").is_ok());
        assert!(robots.check("/private/ok/page").is_ok());
        let err = robots.check("/private/x").unwrap_err();
        assert!(
            err.contains("forbids /private/x (Disallow: /private)"),
            "{err}"
        );
    }

    #[test]
    fn a_group_naming_us_replaces_the_star_group() {
        assert_allows(
            "User-agent: *\nDisallow: /\n\nUser-agent: Chock/0.1\nUser-agent: b\nDisallow: /no\n",
            &[("/yes", true), ("/no/x", false)],
        );
    }

    #[test]
    fn wildcards_and_anchors() {
        for (pattern, path, hit) in [
            ("/*.php$", "/a/b.php", true),
            ("/*.php$", "/a/b.php?x", false),
            ("/a*c", "/abbbc/d", true),
            ("/x$", "/x", true),
            ("/x$", "/xy", false),
            ("/a", "/b", false),
        ] {
            assert_eq!(matches(pattern, path), hit, "{pattern} on {path}");
        }
    }

    #[test]
    fn the_longest_rule_wins_and_allow_wins_a_tie() {
        assert_allows(
            "User-agent: *\nDisallow: /a\nAllow: /a\nDisallow: /a/b\n",
            &[("/a/x", true), ("/a/b", false)],
        );
    }

    #[test]
    fn an_unreachable_file_forbids_everything_but_itself() {
        let robots = Robots::unreachable(URL, "status 503".into());
        assert!(
            robots
                .check("/anything")
                .unwrap_err()
                .contains("status 503")
        );
        assert!(robots.check("/robots.txt").is_ok());
        assert!(Robots::allow_all(URL).check("/x").is_ok());
    }

    #[test]
    fn comments_and_junk_are_skipped() {
        assert_allows(
            "# hi\nnonsense\nUser-agent: * # all\nDisallow: /d # no\n",
            &[("/d", false), ("/e", true)],
        );
    }
}
