//! Where the interface writes, and the one line it redraws. Steps (tool
//! lines, outcomes, the plan) and the model's text may go to different
//! streams: a script's `chock run` keeps the model's text alone on stdout
//! and says each step on stderr, as lines. On a terminal, in an
//! interactive session, the last line is the status line, rewritten in
//! place (carriage return, clear line) and cleared before anything else is
//! written, so it is never left in the scrollback.
//!
//! A write that fails (a terminal closed, a pipe whose reader left) is
//! dropped: the log is the record, and the session must not end for it.

use std::io::Write;

use crossterm::terminal::{Clear, ClearType};

/// The streams the interface writes to.
pub struct Screen {
    steps: Box<dyn Write + Send>,
    /// The model's text, when it goes elsewhere than the steps.
    text: Option<Box<dyn Write + Send>>,
    /// Whether the status line is drawn (an interactive session on a terminal).
    live: bool,
    /// The status line is on the screen now.
    drawn: bool,
    /// The model's text ended mid-line.
    open: bool,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

/// Carriage return and clear the line, as crossterm spells it.
pub(crate) fn clear_line() -> String {
    let mut out = String::from("\r");
    let _ = crossterm::Command::write_ansi(&Clear(ClearType::CurrentLine), &mut out);
    out
}

impl Screen {
    /// Steps to `steps`, the model's text to `text` (or to `steps` too),
    /// with the status line drawn when `live`.
    pub fn new(
        steps: Box<dyn Write + Send>,
        text: Option<Box<dyn Write + Send>>,
        live: bool,
    ) -> Screen {
        Screen {
            steps,
            text,
            live,
            drawn: false,
            open: false,
        }
    }

    /// Whether the status line is drawn at all.
    pub fn live(&self) -> bool {
        self.live
    }

    /// One whole line of a step; the model's unfinished line is ended first.
    pub fn line(&mut self, line: &str) {
        self.end_text();
        self.clear_status();
        let _ = self.steps.write_all(line.as_bytes());
        let _ = self.steps.write_all(b"\n");
        let _ = self.steps.flush();
    }

    /// A piece of the model's text, as it came (`open`: it ended mid-line).
    pub fn text(&mut self, piece: &str, open: bool) {
        self.clear_status();
        let out = self.text.as_mut().unwrap_or(&mut self.steps);
        let _ = out.write_all(piece.as_bytes());
        let _ = out.flush();
        self.open = open;
    }

    /// Ends the model's unfinished line, if it has one.
    pub fn end_text(&mut self) {
        if self.open {
            self.text("\n", false);
        }
    }

    /// Whether the model's text ended mid-line.
    pub fn text_open(&self) -> bool {
        self.open
    }

    /// Rewrites the status line (only when live and no text is mid-line).
    pub fn status(&mut self, status: &str) {
        if !self.live || self.open {
            return;
        }
        let line = format!("{}{status}", clear_line());
        let _ = self.steps.write_all(line.as_bytes());
        let _ = self.steps.flush();
        self.drawn = true;
    }

    /// Takes the status line off the screen.
    pub fn clear_status(&mut self) {
        if self.drawn {
            let _ = self.steps.write_all(clear_line().as_bytes());
            let _ = self.steps.flush();
            self.drawn = false;
        }
    }

    /// Writes `raw` as it is to the steps' stream (the prompt's redraws).
    pub fn raw(&mut self, raw: &str) {
        let _ = self.steps.write_all(raw.as_bytes());
        let _ = self.steps.flush();
    }

    /// `raw` after clearing the current line: the prompt's line redrawn.
    pub fn redraw(&mut self, raw: &str) {
        self.drawn = false;
        self.raw(&format!("{}{raw}", clear_line()));
    }
}

/// The terminal's width in columns (80 when it cannot be read, at least 1).
#[must_use]
pub fn width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stdout())
        .map(|size| usize::from(size.ws_col))
        .ok()
        .filter(|&cols| cols > 0)
        .unwrap_or(80)
}
