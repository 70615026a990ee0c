//! The one way an error a person sees is printed: `chock: <error>: <cause>:
//! <cause>`, on one line, what failed first and then why.
//!
//! The line is the error's chain: the context a subcommand added, the
//! library error under it, and each `source()` after that. Every error type
//! of the workspace says its cause either in its message or as its
//! `source()`, never both (docs/architecture.md), so each link is new; a
//! link whose text the line already holds (an error of another crate that
//! repeats its cause) is left out rather than said twice.

/// The line printed for `err`, `chock: ` included, without a newline.
#[must_use]
pub fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::from("chock:");
    let mut said = String::new();
    for link in err.chain() {
        let text = link.to_string();
        if text.is_empty() || said.contains(&text) {
            continue;
        }
        line.push_str(if said.is_empty() { " " } else { ": " });
        line.push_str(&text);
        said.push_str(&text);
        said.push('\n');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that, against the rule, says its cause and returns it.
    #[derive(Debug)]
    struct Repeats(std::io::Error);

    impl std::fmt::Display for Repeats {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "outer: {}", self.0)
        }
    }

    impl std::error::Error for Repeats {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_link_is_said_once() {
        let err = anyhow::Error::new(Repeats(std::io::Error::other("the cause")))
            .context("what was being done");
        assert_eq!(
            error_line(&err),
            "chock: what was being done: outer: the cause"
        );
    }

    #[test]
    fn a_chain_of_new_links_is_said_whole() {
        let err = anyhow::Error::new(std::io::Error::other("the cause"))
            .context("the step")
            .context("the command");
        assert_eq!(error_line(&err), "chock: the command: the step: the cause");
    }
}
