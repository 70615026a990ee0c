//! The prompt's line editor, fed the bytes the terminal sends: typed
//! characters (UTF-8), Enter, Backspace, Ctrl-U (clear), Ctrl-W (delete a
//! word), Ctrl-D on an empty line (leave), and a bracketed paste, taken
//! whole (its newlines kept, nothing in it read as a key). Cursor keys and
//! other escape sequences are read and ignored. Pure: what the bytes did
//! is returned, and nothing here touches the terminal, so it is tested
//! byte by byte.
//!
//! A message is at most [`MAX_MESSAGE`] bytes. A paste that would make it
//! longer is refused whole, said once with its size, and nothing typed
//! before it is lost; the paste's bytes are counted, never kept, so a
//! paste of any size costs no memory.

/// The longest message the prompt takes, in bytes.
pub const MAX_MESSAGE: usize = 256 * 1024;

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// What a run of bytes came to, besides editing the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fed {
    /// Enter: the line, taken out of the editor.
    Line(String),
    /// Ctrl-D on an empty line.
    Leave,
    /// A paste of this many bytes was refused: it would have made the
    /// message longer than [`MAX_MESSAGE`].
    Refused(usize),
}

/// Where the reader is in the byte stream.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Reading {
    #[default]
    Keys,
    /// After ESC: the bytes of an escape sequence so far.
    Escape(Vec<u8>),
    /// Inside a bracketed paste: its text so far (`None` once it is too
    /// long to be kept), its size, and the bytes that may begin its end.
    Paste {
        text: Option<Vec<u8>>,
        size: usize,
        tail: Vec<u8>,
    },
}

/// The line being typed.
#[derive(Debug, Default)]
pub struct Editor {
    text: String,
    reading: Reading,
    /// The bytes of a character not yet whole.
    utf8: Vec<u8>,
}

impl Editor {
    /// The line as typed so far.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Forgets the line (Ctrl-C at the prompt).
    pub fn clear(&mut self) {
        self.text.clear();
    }

    /// Takes `bytes`; what they came to, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Fed> {
        let mut out = Vec::new();
        for &byte in bytes {
            self.byte(byte, &mut out);
        }
        out
    }

    fn byte(&mut self, byte: u8, out: &mut Vec<Fed>) {
        match std::mem::take(&mut self.reading) {
            Reading::Keys => self.key(byte, out),
            Reading::Escape(mut seq) => {
                seq.push(byte);
                if seq.as_slice() == PASTE_START {
                    self.reading = Reading::Paste {
                        text: Some(Vec::new()),
                        size: 0,
                        tail: Vec::new(),
                    };
                } else if !escape_done(&seq) {
                    self.reading = Reading::Escape(seq);
                }
            }
            Reading::Paste {
                mut text,
                mut size,
                mut tail,
            } => {
                tail.push(byte);
                if tail.as_slice() == PASTE_END {
                    self.pasted(text, size, out);
                    return;
                }
                if !PASTE_END.starts_with(&tail) {
                    // Not the end after all: what was held back is pasted text.
                    size += tail.len();
                    let room = MAX_MESSAGE.saturating_sub(self.text.len());
                    text = text.filter(|t| t.len() + tail.len() <= room).map(|mut t| {
                        t.extend_from_slice(&tail);
                        t
                    });
                    tail.clear();
                }
                self.reading = Reading::Paste { text, size, tail };
            }
        }
    }

    fn pasted(&mut self, text: Option<Vec<u8>>, size: usize, out: &mut Vec<Fed>) {
        match text {
            Some(text) => {
                let text = String::from_utf8_lossy(&text)
                    .replace("\r\n", "\n")
                    .replace('\r', "\n");
                self.text.push_str(&text);
            }
            None => out.push(Fed::Refused(size)),
        }
    }

    fn key(&mut self, byte: u8, out: &mut Vec<Fed>) {
        match byte {
            0x1b => self.reading = Reading::Escape(vec![byte]),
            b'\r' | b'\n' => out.push(Fed::Line(std::mem::take(&mut self.text))),
            0x7f | 0x08 => {
                self.text.pop();
            }
            0x15 => self.text.clear(),
            0x17 => {
                let kept = self.text.trim_end().rfind(' ').map_or(0, |at| at + 1);
                self.text.truncate(kept);
            }
            0x04 if self.text.is_empty() => out.push(Fed::Leave),
            b'\t' => self.push(" "),
            0x00..=0x1f => {}
            _ => {
                self.utf8.push(byte);
                match std::str::from_utf8(&self.utf8) {
                    Ok(text) => {
                        let text = text.to_owned();
                        self.push(&text);
                        self.utf8.clear();
                    }
                    Err(err) if err.error_len().is_some() || self.utf8.len() >= 4 => {
                        self.utf8.clear();
                    }
                    Err(_) => {}
                }
            }
        }
    }

    /// Typed text, kept while the message has room.
    fn push(&mut self, text: &str) {
        if self.text.len() + text.len() <= MAX_MESSAGE {
            self.text.push_str(text);
        }
    }
}

/// Whether `seq` (which begins with ESC) is a whole escape sequence: ESC
/// and one byte, or a CSI (`ESC [`) or SS3 (`ESC O`) sequence up to its
/// final byte.
fn escape_done(seq: &[u8]) -> bool {
    match seq {
        [_] => false,
        [_, b'[' | b'O'] => false,
        [_, b'[', .., last] => (0x40..=0x7e).contains(last),
        [_, b'O', _] => true,
        _ => true,
    }
}

/// What the prompt line shows of `text` in `cols` columns after the
/// marker: its end, newlines shown as `↵`.
#[must_use]
pub fn shown(text: &str, cols: usize) -> String {
    let mut tail: Vec<char> = text
        .chars()
        .rev()
        .take(cols.max(1))
        .map(|c| if c == '\n' { '↵' } else { c })
        .collect();
    tail.reverse();
    let mut out: String = tail.into_iter().collect();
    if text.chars().count() > cols.max(1) {
        out.remove(0);
        out.insert(0, '…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_editing_and_enter() {
        let mut editor = Editor::default();
        assert_eq!(editor.feed(b"helo\x7flo w\xc3\xb6rld"), []);
        assert_eq!(editor.text(), "hello wörld");
        assert_eq!(editor.feed(b"\x17"), []);
        assert_eq!(editor.text(), "hello ");
        assert_eq!(
            editor.feed(b"there\x1b[D\x1bOA\r"),
            [Fed::Line("hello there".into())]
        );
        assert_eq!(editor.text(), "");
        assert_eq!(editor.feed(b"x\x15\x04"), [Fed::Leave]);
    }

    #[test]
    fn a_character_split_across_reads_is_whole() {
        let mut editor = Editor::default();
        editor.feed(b"\xe2\x82");
        editor.feed(b"\xac");
        assert_eq!(editor.text(), "€");
    }

    #[test]
    fn a_paste_keeps_its_newlines_and_no_key_in_it_acts() {
        let mut editor = Editor::default();
        let fed = editor.feed(b"see: \x1b[200~line one\r\nline two\x04\x1b[201~\r");
        assert_eq!(fed, [Fed::Line("see: line one\nline two\u{4}".into())]);
    }

    #[test]
    fn a_paste_longer_than_a_message_is_refused_whole_and_the_line_kept() {
        let mut editor = Editor::default();
        editor.feed(b"keep this ");
        let mut fed = editor.feed(PASTE_START);
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..16 {
            fed.extend(editor.feed(&chunk));
        }
        fed.extend(editor.feed(PASTE_END));
        assert_eq!(fed, [Fed::Refused(1024 * 1024)]);
        assert_eq!(editor.text(), "keep this ");
    }

    #[test]
    fn the_line_shows_its_end() {
        assert_eq!(shown("short", 10), "short");
        assert_eq!(shown("a\nb", 10), "a↵b");
        assert_eq!(shown("0123456789abc", 5), "…9abc");
    }
}
