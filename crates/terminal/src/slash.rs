//! The slash commands of an interactive session: a line that begins with
//! `/` and names one of them is a command for chock, not a message for the
//! model (`//` begins a message that starts with `/`). Each is documented
//! in docs/cli.md; `/help` prints [`HELP`].

/// One slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slash {
    Help,
    /// The plan as it stands.
    Plan,
    /// Tokens and model calls so far.
    Usage,
    /// The workspace's changes (`chock workspace diff`).
    Diff,
    /// Carry the session's commits into the project (`chock workspace apply`).
    Apply,
    /// Hand the session to the daemon (`chock detach`).
    Detach,
    /// A call's whole result: the last call's, or call `n`'s.
    Show(Option<usize>),
    /// The model for the next turns (`instance/model`), or, with none
    /// named, the current one and how to switch.
    Model(Option<String>),
    /// Compact the conversation now.
    Compact,
    /// A word that is no command.
    Unknown(String),
}

/// What `/help` says.
pub const HELP: &str = "\
/help        this list
/plan        the plan as it stands
/usage       tokens and model calls so far
/show [n]    the whole result of the last call, or of call n (calls are numbered from 1)
/diff        everything the session changed in its workspace (chock workspace diff)
/apply       carry the session's commits into your project (chock workspace apply)
/detach      hand the session to the daemon (chock detach) and leave it running
/model [m]   the model for the next turns (<instance>/<model> from config.zon); alone, the current one
/compact     summarise the conversation so far now, keeping the last answer whole
Ctrl-C interrupts the turn; at the prompt, Ctrl-C twice or Ctrl-D leaves.
A line beginning with // is sent as a message beginning with /.";

/// What a line typed at the prompt is: a command (`Some`), or a message,
/// returned as it is to be sent (`Err`).
pub fn parse(line: &str) -> Result<Slash, String> {
    if let Some(message) = line.strip_prefix("//") {
        return Err(format!("/{message}"));
    }
    let Some(command) = line.trim().strip_prefix('/') else {
        return Err(line.to_owned());
    };
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or("");
    Ok(match name {
        "help" | "?" => Slash::Help,
        "plan" => Slash::Plan,
        "usage" => Slash::Usage,
        "diff" => Slash::Diff,
        "apply" => Slash::Apply,
        "detach" => Slash::Detach,
        "compact" => match words.next() {
            None => Slash::Compact,
            Some(_) => Slash::Unknown(command.to_owned()),
        },
        "model" => match (words.next(), words.next()) {
            (None, _) => Slash::Model(None),
            (Some(name), None) => Slash::Model(Some(name.to_owned())),
            (Some(_), Some(_)) => Slash::Unknown(command.to_owned()),
        },
        "show" => match words.next().map(str::parse::<usize>) {
            None => Slash::Show(None),
            Some(Ok(n)) => Slash::Show(Some(n)),
            Some(Err(_)) => Slash::Unknown(command.to_owned()),
        },
        _ => Slash::Unknown(command.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_messages_are_told_apart() {
        assert_eq!(parse("/help"), Ok(Slash::Help));
        assert_eq!(parse(" /show 3"), Ok(Slash::Show(Some(3))));
        assert_eq!(parse("/show"), Ok(Slash::Show(None)));
        assert_eq!(parse("/show x"), Ok(Slash::Unknown("show x".into())));
        assert_eq!(parse("/nope"), Ok(Slash::Unknown("nope".into())));
        assert_eq!(parse("//etc is a path"), Err("/etc is a path".into()));
        assert_eq!(parse("fix the bug"), Err("fix the bug".into()));
    }

    #[test]
    fn model_takes_one_name_or_none() {
        assert_eq!(parse("/model"), Ok(Slash::Model(None)));
        assert_eq!(
            parse("/model second/m"),
            Ok(Slash::Model(Some("second/m".into())))
        );
        assert_eq!(
            parse("  /model   fake/m  "),
            Ok(Slash::Model(Some("fake/m".into())))
        );
        assert_eq!(
            parse("/model a/b c/d"),
            Ok(Slash::Unknown("model a/b c/d".into()))
        );
        assert_eq!(parse("//model x"), Err("/model x".into()));
    }

    #[test]
    fn compact_takes_no_argument() {
        assert_eq!(parse("/compact"), Ok(Slash::Compact));
        assert_eq!(
            parse("/compact now"),
            Ok(Slash::Unknown("compact now".into()))
        );
    }

    #[test]
    fn help_names_every_command() {
        for name in [
            "/help", "/plan", "/usage", "/show", "/diff", "/apply", "/detach", "/model", "/compact",
        ] {
            assert!(HELP.contains(name), "{name}");
        }
    }
}
