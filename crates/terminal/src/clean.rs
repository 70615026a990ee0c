//! What the screen is given of text it did not write: a command's output,
//! a file's lines, the model's words. Every control character but newline
//! and tab is shown as a caret pair (`^[` for ESC, `^M` for a carriage
//! return, `^?` for DEL) and every C1 control as `<U+009B>`, so no text
//! from the session can move the cursor, clear the screen, retitle the
//! window or ring the bell: it is shown, never interpreted.

use std::borrow::Cow;

/// `text` with its control characters made visible (see the module docs).
#[must_use]
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{7f}' => out.push_str("^?"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c if is_control(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn is_control(c: char) -> bool {
    c != '\n' && c != '\t' && (c.is_control() || c == '\u{7f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_interpreted() {
        let hostile = "ok\x1b[2J\x1b]0;pwned\x07\rover\u{9b}31m\x7f\tend\n";
        let shown = visible(hostile);
        assert_eq!(shown, "ok^[[2J^[]0;pwned^G^Mover<U+009B>31m^?\tend\n");
        assert!(!shown.chars().any(is_control));
    }

    #[test]
    fn plain_text_is_not_copied() {
        assert!(matches!(visible("plain — text\n"), Cow::Borrowed(_)));
    }
}
