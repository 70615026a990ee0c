//! The foreground prompt: when `chock run` has a terminal on stdin, a
//! question is also shown on stderr and answered there, racing approve.sock
//! (the first answer wins; the other side is told). Reading stays on the
//! session's one thread: stdin is registered with the runtime's reactor
//! (`AsyncFd`) rather than read by a blocking thread, because the tool path
//! forks and a session has no other threads (DESIGN.md, Processes).
//!
//! The descriptor is a duplicate of stdin and is never made non-blocking
//! (that flag lives on the open file, which the person's shell shares); a
//! terminal in canonical mode is readable only once a whole line is typed,
//! so the read that follows readiness does not block.

use std::cell::RefCell;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::rc::Rc;

use tokio::io::unix::AsyncFd;

use super::Answer;
use super::socket::{ApproveSocket, Given, Wants};

/// The foreground terminal, shared by everyone in the session who asks a
/// person: the turn (a tool call's question, ask_user) and the network's
/// questions about a running command's connections. A question takes the
/// terminal for as long as it is open and puts it back; a question asked
/// while another holds it goes to approve.sock alone (the two rarely meet:
/// the turn waits on the command whose connections ask). Empty when the
/// session has no terminal.
#[derive(Clone, Debug, Default)]
pub(crate) struct TerminalSlot(Rc<RefCell<Option<Terminal>>>);

impl TerminalSlot {
    pub(crate) fn new(terminal: Option<Terminal>) -> Self {
        Self(Rc::new(RefCell::new(terminal)))
    }

    /// Waits for the answer to `request` on approve.sock and, when the
    /// terminal is free, on the terminal too: the first answer wins, and
    /// the terminal is told when approve.sock's did. Returns the answer and
    /// who gave it (`terminal` or `approve.sock`).
    pub(crate) async fn race(
        &self,
        approvals: &ApproveSocket,
        request: &str,
        question: &str,
        wants: Wants,
    ) -> (Given, &'static str) {
        let socket = approvals.wait_for_kind(request, wants);
        // Taken, not borrowed: no RefCell borrow lives across the await;
        // and put back however the wait ends, a turn cut short included.
        let mut held = Held {
            slot: self,
            terminal: self.0.borrow_mut().take(),
        };
        let Some(terminal) = held.terminal.as_mut() else {
            return (socket.await, "approve.sock");
        };
        let first = tokio::select! {
            given = socket => (given, "approve.sock"),
            given = terminal.ask(question, wants) => (given, "terminal"),
        };
        if first.1 == "approve.sock" {
            terminal.say("\n(answered through approve.sock)\n");
        }
        first
    }
}

/// The terminal while a question holds it; given back to its slot when
/// dropped.
struct Held<'s> {
    slot: &'s TerminalSlot,
    terminal: Option<Terminal>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.slot.0.borrow_mut() = self.terminal.take();
    }
}

/// A line source and where its prompts go.
pub(crate) struct Terminal {
    input: AsyncFd<OwnedFd>,
    output: Box<dyn Write>,
    /// Bytes read past the last whole line.
    pending: Vec<u8>,
    /// End of input was seen: the terminal takes no more answers.
    closed: bool,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl Terminal {
    /// The process's stdin and stderr, when stdin is a terminal.
    pub(crate) fn stdin() -> Option<Terminal> {
        let stdin = std::io::stdin();
        if !rustix::termios::isatty(stdin.as_fd()) {
            return None;
        }
        let fd = rustix::io::dup(stdin.as_fd()).ok()?;
        Terminal::new(fd, Box::new(std::io::stderr())).ok()
    }

    /// Reads answers from `input` (a terminal, or a pipe in tests) and
    /// writes prompts to `output`.
    #[expect(
        deprecated,
        reason = "the registration owns its OwnedFd, which holds the same descriptor until it is dropped"
    )]
    pub(crate) fn new(input: OwnedFd, output: Box<dyn Write>) -> std::io::Result<Terminal> {
        Ok(Terminal {
            input: AsyncFd::new(input)?,
            output,
            pending: Vec::new(),
            closed: false,
        })
    }

    /// Writes `text` to the terminal; a terminal that went away is not the
    /// session's problem (the log is the record).
    pub(crate) fn say(&mut self, text: &str) {
        let _ = self.output.write_all(text.as_bytes());
        let _ = self.output.flush();
    }

    /// Shows `question` and reads until a valid answer is typed. Never
    /// completes once input has ended, so approve.sock can still answer.
    pub(crate) async fn ask(&mut self, question: &str, wants: Wants) -> Given {
        let prompt = match wants {
            Wants::YesNo => "allow it? [y/n] ",
            Wants::Text => "your answer: ",
        };
        self.say(&format!("\nchock asks: {question}\n{prompt}"));
        loop {
            let Some(line) = self.line().await else {
                return std::future::pending().await;
            };
            let line = line.trim();
            match wants {
                Wants::YesNo => match line.to_ascii_lowercase().as_str() {
                    "y" | "yes" => return Given::Answer(Answer::Yes),
                    "n" | "no" => return Given::Answer(Answer::No),
                    _ => self.say("please answer y or n: "),
                },
                Wants::Text if line.is_empty() => self.say("please type an answer: "),
                Wants::Text => return Given::Text(line.to_owned()),
            }
        }
    }

    /// The next whole line, or `None` at end of input. Cancel-safe: bytes
    /// read are kept in `pending` until a line is complete.
    async fn line(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return Some(String::from_utf8_lossy(&line[..end]).into_owned());
            }
            if self.closed {
                return None;
            }
            let Ok(mut guard) = self.input.readable().await else {
                self.closed = true;
                continue;
            };
            // Readiness left over from the last read must not block the
            // thread in a read with nothing to read.
            if !crate::person::has_input(self.input.get_ref()) {
                guard.clear_ready();
                continue;
            }
            let mut buf = [0u8; 1024];
            match guard.try_io(|fd| rustix::io::read(fd, &mut buf).map_err(std::io::Error::from)) {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    // End of input: a last line without its newline counts.
                    self.closed = true;
                    if !self.pending.is_empty() {
                        self.pending.push(b'\n');
                    }
                }
                Ok(Ok(n)) => self.pending.extend_from_slice(&buf[..n]),
                Err(_would_block) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    use chock_testkit::runtime;

    #[test]
    fn a_typed_answer_is_read_after_a_wrong_one() {
        runtime().block_on(async {
            let (read, write) = rustix::pipe::pipe().unwrap();
            let shown = Shared::default();
            let mut terminal = Terminal::new(read, Box::new(shown.clone())).unwrap();
            rustix::io::write(&write, b"maybe\nY\n").unwrap();
            let given = terminal.ask("allow call.write_file?", Wants::YesNo).await;
            assert_eq!(given, Given::Answer(Answer::Yes));
            let text = String::from_utf8(shown.0.lock().unwrap().clone()).unwrap();
            assert!(
                text.contains("chock asks: allow call.write_file?"),
                "{text}"
            );
            assert!(text.contains("please answer y or n"), "{text}");

            rustix::io::write(&write, b"\nport 8080\n").unwrap();
            let given = terminal.ask("which port?", Wants::Text).await;
            assert_eq!(given, Given::Text("port 8080".into()));
        });
    }

    #[test]
    fn after_end_of_input_the_terminal_never_answers() {
        runtime().block_on(async {
            let (read, write) = rustix::pipe::pipe().unwrap();
            let mut terminal = Terminal::new(read, Box::new(Shared::default())).unwrap();
            rustix::io::write(&write, b"maybe").unwrap();
            drop(write);
            let waited = tokio::time::timeout(
                std::time::Duration::from_millis(200),
                terminal.ask("allow?", Wants::YesNo),
            )
            .await;
            assert!(waited.is_err(), "no answer comes from a closed input");
        });
    }
}
