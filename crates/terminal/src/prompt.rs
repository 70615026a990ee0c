//! The prompt: the terminal taken out of canonical mode while the person
//! types (no echo, a byte at a time, signals kept, so Ctrl-C is SIGINT
//! wherever the session is), bracketed paste turned on, and the line
//! redrawn after every read. It is put back as it was (canonical, echoing)
//! however the prompt ends, so a question asked during the turn, a command
//! run from a slash command, and the shell after the session all find the
//! terminal as they expect.
//!
//! Stdin is read on the session's own thread through the runtime's reactor
//! (`AsyncFd` on a duplicate), as the approval prompt reads it: nothing
//! here starts a thread (DESIGN.md, Processes).

use std::cell::Cell;
use std::os::fd::{AsFd, OwnedFd};

use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, Termios};
use tokio::io::unix::AsyncFd;

use crate::ctrl_c::CtrlC;
use crate::editor::{Editor, Fed, MAX_MESSAGE, shown};
use crate::screen::width;
use crate::style::Tone;
use crate::view::Shared;

/// The marker the prompt's line begins with.
const MARKER: &str = "› ";

/// What the person did at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Read {
    Line(String),
    /// Ctrl-D on an empty line, or a second Ctrl-C.
    Leave,
    /// The terminal went away (end of input, or an error reading it).
    Gone,
}

/// The prompt's terminal and line.
pub(crate) struct Prompt {
    /// Stdin's duplicate, until the first read registers it with the
    /// runtime (which does not exist yet when the prompt is made).
    fd: Option<OwnedFd>,
    input: Option<AsyncFd<OwnedFd>>,
    editor: Editor,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt").finish_non_exhaustive()
    }
}

/// The terminal's modes while the prompt reads; the saved ones come back
/// when this is dropped.
struct Raw {
    fd: OwnedFd,
    saved: Termios,
}

impl Raw {
    fn enter(fd: &OwnedFd) -> Option<Raw> {
        let fd = fd.try_clone().ok()?;
        let saved = rustix::termios::tcgetattr(&fd).ok()?;
        let mut raw = saved.clone();
        raw.local_modes -= LocalModes::ICANON | LocalModes::ECHO | LocalModes::IEXTEN;
        raw.special_codes[SpecialCodeIndex::VMIN] = 1;
        raw.special_codes[SpecialCodeIndex::VTIME] = 0;
        rustix::termios::tcsetattr(&fd, OptionalActions::Now, &raw).ok()?;
        Some(Raw { fd, saved })
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(&self.fd, OptionalActions::Now, &self.saved);
    }
}

impl Prompt {
    /// The prompt on stdin, when stdin is a terminal.
    #[must_use]
    pub(crate) fn stdin() -> Option<Prompt> {
        let stdin = std::io::stdin();
        if !rustix::termios::isatty(stdin.as_fd()) {
            return None;
        }
        let fd = rustix::io::dup(stdin.as_fd()).ok()?;
        Some(Prompt {
            fd: Some(fd),
            input: None,
            editor: Editor::default(),
        })
    }

    /// Stdin registered with the runtime; `None` if it cannot be.
    fn input(&mut self) -> Option<&AsyncFd<OwnedFd>> {
        if let Some(fd) = self.fd.take() {
            #[expect(
                deprecated,
                reason = "the registration owns its OwnedFd, which holds the same descriptor until it is dropped"
            )]
            let registered = AsyncFd::new(fd).ok();
            self.input = registered;
        }
        self.input.as_ref()
    }

    /// Reads one line. `armed` is set when the last thing the person did
    /// was a Ctrl-C (one that cut a turn short counts): a Ctrl-C then, on
    /// an empty line, leaves; any other clears the line and says so.
    pub(crate) async fn read(&mut self, view: &Shared, armed: &Cell<bool>, ctrl_c: &CtrlC) -> Read {
        let Some(input) = self.input() else {
            return Read::Gone;
        };
        let raw = Raw::enter(input.get_ref());
        view.borrow_mut().screen.raw("\x1b[?2004h");
        self.draw(view);
        let read = loop {
            let fed = tokio::select! {
                bytes = next_bytes(self.input.as_ref()) => match bytes {
                    Some(bytes) => self.editor.feed(&bytes),
                    None => break Read::Gone,
                },
                () = ctrl_c.pressed() => {
                    if armed.get() && self.editor.text().is_empty() {
                        break Read::Leave;
                    }
                    armed.set(true);
                    self.editor.clear();
                    self.say(view, "(Ctrl-C again, or Ctrl-D, leaves the session)");
                    continue;
                }
            };
            if let Some(read) = self.fed(view, armed, fed) {
                break read;
            }
            self.draw(view);
        };
        view.borrow_mut().screen.raw("\x1b[?2004l");
        drop(raw);
        read
    }

    /// What the editor's results come to: a line or leaving ends the read.
    fn fed(&mut self, view: &Shared, armed: &Cell<bool>, fed: Vec<Fed>) -> Option<Read> {
        for fed in fed {
            armed.set(false);
            match fed {
                Fed::Line(line) => {
                    self.finish(view, &line);
                    return Some(Read::Line(line));
                }
                Fed::Leave => {
                    self.finish(view, "");
                    return Some(Read::Leave);
                }
                Fed::Refused(size) => self.say(
                    view,
                    &format!(
                        "chock: the paste of {size} bytes was not added: a message holds at most {MAX_MESSAGE} bytes; save it to a file in the project and name the file instead"
                    ),
                ),
            }
        }
        None
    }

    /// Says `text` on a line of its own above the prompt.
    fn say(&self, view: &Shared, text: &str) {
        {
            let mut shown = view.borrow_mut();
            shown.screen.redraw("");
            let line = shown.looks.painted(Tone::Asks, text);
            shown.screen.line(&line);
        }
        self.draw(view);
    }

    /// The prompt's line as it now reads.
    fn draw(&self, view: &Shared) {
        let mut view = view.borrow_mut();
        let cols = width().saturating_sub(MARKER.chars().count() + 1);
        let line = format!(
            "{}{}",
            view.looks.painted(Tone::Bold, MARKER),
            crate::clean::visible(&shown(self.editor.text(), cols))
        );
        view.screen.redraw(&line);
    }

    /// The line as sent, left on the screen, and the line ended.
    fn finish(&self, view: &Shared, line: &str) {
        let mut view = view.borrow_mut();
        let cols = width().saturating_sub(MARKER.chars().count() + 1);
        let lines = line.lines().count();
        let mut text = format!(
            "{}{}",
            view.looks.painted(Tone::Bold, MARKER),
            crate::clean::visible(&shown(line, cols))
        );
        if lines > 1 {
            view.looks
                .paint(&mut text, Tone::Dim, &format!(" ({lines} lines)"));
        }
        view.screen.redraw(&text);
        view.screen.raw("\n");
    }
}

/// The next bytes the terminal sends; `None` once it has gone. The
/// descriptor blocks (see the module docs), so it is read only once
/// `poll(2)` says input is there: the reactor's readiness may be left
/// over from the last read, and a read on it would hold the session's
/// thread until the person typed.
async fn next_bytes(input: Option<&AsyncFd<OwnedFd>>) -> Option<Vec<u8>> {
    let input = input?;
    loop {
        let mut guard = input.readable().await.ok()?;
        if !chock_runner::person::has_input(input.get_ref()) {
            guard.clear_ready();
            continue;
        }
        let mut buf = vec![0u8; 64 * 1024];
        match guard.try_io(|fd| rustix::io::read(fd, &mut buf[..]).map_err(std::io::Error::from)) {
            Ok(Ok(0) | Err(_)) => return None,
            Ok(Ok(n)) => {
                buf.truncate(n);
                return Some(buf);
            }
            Err(_would_block) => {}
        }
    }
}
