//! What may stand in one segment of an action name.
//!
//! A segment is the text between two dots. Everything a builder puts into a
//! name passes through one of these checks, because a dot or a `*` smuggled
//! into a segment would turn one action into a class of actions nobody wrote.

/// Letters, digits, `_` and `-`: the common shape of a tool, server, plugin,
/// instance or language-server name.
pub fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A program's file name: a label that may also hold `+` (as `g++` does) and
/// dots between non-empty parts (as `python3.11` does). The dots split it
/// into segments, so `exec.path.python3.*` reads as every `python3.<x>`.
pub(crate) fn is_program_name(s: &str) -> bool {
    dotted(s, |part| {
        part.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+'))
    })
}

/// A model id as it goes on the wire: labels plus `/`, `:`, `@` and `+`
/// (`anthropic/claude-3.5`, `llama3:8b`), with dots between non-empty parts.
pub(crate) fn is_model_id(s: &str) -> bool {
    dotted(s, |part| {
        part.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'/' | b':' | b'@')
        })
    })
}

/// A Nix attribute path: labels (plus `+` and `'`) joined by dots.
pub(crate) fn is_attr_path(s: &str) -> bool {
    dotted(s, |part| {
        part.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'\''))
    })
}

/// A secret's name: letters, digits and underscore, nothing else, so that it
/// is always exactly one segment.
pub(crate) fn is_secret_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A git subcommand as the shim names it (`commit`, `branch.delete`).
pub(crate) fn is_git_subcommand(s: &str) -> bool {
    dotted(s, |part| {
        part.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    })
}

/// A relative path inside the project (`scripts/release`): `/`-separated
/// components, none empty, none `.` or `..`, none with a dot at either end.
pub(crate) fn is_relative_path(s: &str, allow_dots: bool) -> bool {
    !s.is_empty()
        && s.split('/').all(|c| {
            !c.is_empty()
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
                && (allow_dots && dotted(c, |_| true) || !c.contains('.'))
        })
}

/// Lower-case hexadecimal of exactly four digits, as a USB id is written.
pub(crate) fn is_usb_id(s: &str) -> bool {
    s.len() == 4
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `s` is non-empty parts joined by single dots, each part passing `part`.
fn dotted(s: &str, part: impl Fn(&str) -> bool) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && part(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_holds_no_dot_star_or_space() {
        assert!(is_label("read_file"));
        assert!(is_label("zls"));
        for bad in ["", "a.b", "a*", "a b", "é", "a/b"] {
            assert!(!is_label(bad), "{bad}");
        }
    }

    #[test]
    fn dotted_names_refuse_empty_parts() {
        assert!(is_program_name("python3.11"));
        assert!(is_program_name("g++"));
        for bad in ["", ".x", "x.", "a..b", "a*"] {
            assert!(!is_program_name(bad), "{bad}");
        }
    }

    #[test]
    fn relative_paths_refuse_climbing() {
        assert!(is_relative_path("scripts/release", false));
        assert!(is_relative_path("bin/build.sh", true));
        assert!(!is_relative_path("bin/build.sh", false));
        for bad in ["", "/abs", "a//b", "../x", "a/./b", "a/"] {
            assert!(!is_relative_path(bad, true), "{bad}");
        }
    }

    #[test]
    fn usb_ids_are_four_lower_case_hex_digits() {
        assert!(is_usb_id("1d50"));
        assert!(!is_usb_id("1D50"));
        assert!(!is_usb_id("1d5"));
        assert!(!is_usb_id("xd50"));
    }
}
