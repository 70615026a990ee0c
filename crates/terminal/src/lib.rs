//! The terminal a person runs a session in. [`Interface`] is the
//! session's [`Person`]: it is handed the model's text as it streams and
//! every event the moment the log records it (the log writer's tap), and
//! draws from them one line per tool call, its outcome, a write's diff, the
//! plan and a status line; in an interactive session it asks for each next
//! message at a prompt and takes the slash commands there.
//!
//! Everything runs on the session's one thread, inside its runtime: the
//! tap is a plain call made by the writer after each append, the prompt
//! reads stdin through the reactor, and a slash command that runs another
//! `chock` (`/diff`, `/apply`, `/detach`) starts it as a child process. No
//! thread is started here, so the session stays single threaded as
//! DESIGN.md requires (see docs/architecture.md, "The terminal").
//!
//! Two shapes: [`Interface::interactive`] (stdin and stdout terminals:
//! markdown, colour, the status line, the prompt) and
//! [`Interface::one_shot`] (`chock run <project> "<message>"`: the model's
//! text alone on stdout, each step a line on stderr, escape codes only
//! where stderr is a terminal and `NO_COLOR` is not set).

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod clean;
mod ctrl_c;
pub mod describe;
pub mod editor;
pub mod markdown;
mod prompt;
pub mod screen;
pub mod slash;
pub mod style;
pub mod view;

use std::cell::{Cell, RefCell};
use std::os::fd::AsFd;
use std::rc::Rc;

use chock_log::{EventBody, EventId, Tap, read_after};
use chock_runner::person::{Begun, Next, Person, Told};

use crate::ctrl_c::CtrlC;
use crate::prompt::{Prompt, Read};
use crate::screen::Screen;
use crate::slash::{HELP, Slash};
use crate::style::{Looks, Tone};
use crate::view::{Shared, View, Waiting};

/// The session's person at this terminal.
#[derive(Debug)]
pub struct Interface {
    view: Shared,
    /// The prompt, in an interactive session.
    prompt: Option<Prompt>,
    /// The last thing the person did was a Ctrl-C.
    armed: Rc<Cell<bool>>,
    ctrl_c: CtrlC,
    started: Started,
}

/// The `chock detach` a slash command started and left running: it is
/// still telling the daemon to take the session over when the session
/// has let go, so the program waits for it before it exits.
#[derive(Debug, Clone, Default)]
pub struct Started(Rc<RefCell<Vec<std::process::Child>>>);

impl Started {
    /// Waits for each (a child that cannot be waited for is gone already).
    pub fn wait(self) {
        for mut child in self.0.borrow_mut().drain(..) {
            let _ = child.wait();
        }
    }
}

fn is_tty(fd: impl AsFd) -> bool {
    rustix::termios::isatty(fd)
}

impl Interface {
    /// One task for a script or a person watching: the model's text on
    /// stdout as it came, each step a line on stderr.
    #[must_use]
    pub fn one_shot() -> Interface {
        let looks = Looks::for_output(is_tty(std::io::stderr()));
        let screen = Screen::new(
            Box::new(std::io::stderr()),
            Some(Box::new(std::io::stdout())),
            false,
        );
        Interface {
            view: Shared::new(View::new(screen, looks, false, is_tty(std::io::stdin()))),
            prompt: None,
            armed: Rc::default(),
            ctrl_c: CtrlC::default(),
            started: Started::default(),
        }
    }

    /// An interactive session, when stdin and stdout are both terminals.
    #[must_use]
    pub fn interactive() -> Option<Interface> {
        if !is_tty(std::io::stdout()) {
            return None;
        }
        let prompt = Prompt::stdin()?;
        let looks = Looks::for_output(true);
        let screen = Screen::new(Box::new(std::io::stdout()), None, true);
        Some(Interface {
            view: Shared::new(View::new(screen, looks, true, true)),
            prompt: Some(prompt),
            armed: Rc::default(),
            ctrl_c: CtrlC::default(),
            started: Started::default(),
        })
    }

    /// What this interface starts that outlives the session's run.
    #[must_use]
    pub fn started(&self) -> Started {
        self.started.clone()
    }
}

impl Person for Interface {
    fn text(&mut self, delta: &str) {
        self.view.borrow_mut().text(delta);
    }

    fn begin(&mut self, begun: &Begun<'_>) -> Option<Tap> {
        // Inside the runtime now: Ctrl-C is the person's from here on (a
        // session that is not interactive leaves it to end the session).
        if self.prompt.is_some() {
            self.ctrl_c.listen();
        }
        self.view
            .borrow_mut()
            .begin(begun.id.as_str(), begun.model, begun.root, begun.log);
        let view = self.view.clone();
        Some(Tap::new(move |event| view.borrow_mut().see(event)))
    }

    fn interactive(&self) -> bool {
        self.prompt.is_some()
    }

    async fn next(&mut self) -> Next {
        let Some(prompt) = self.prompt.as_mut() else {
            return Next::Leave;
        };
        loop {
            {
                let mut view = self.view.borrow_mut();
                view.waiting = Waiting::Prompt;
                let status = format!("── {}", view.status_text());
                view.step(Tone::Dim, &status);
            }
            match prompt.read(&self.view, &self.armed, &self.ctrl_c).await {
                Read::Leave => return Next::Leave,
                Read::Gone => return Next::Gone,
                Read::Line(line) => match slash::parse(&line) {
                    Err(message) if message.trim().is_empty() => {}
                    Err(message) => {
                        self.view.borrow_mut().waiting = Waiting::Model;
                        return Next::Message(message);
                    }
                    Ok(Slash::Model(Some(name))) => return Next::Model(name),
                    Ok(Slash::Compact) => {
                        self.view.borrow_mut().step(
                            Tone::Dim,
                            "  compacting: the model summarises the conversation so far",
                        );
                        self.view.borrow_mut().waiting = Waiting::Model;
                        return Next::Compact;
                    }
                    Ok(command) => run_command(&self.view, &self.started, command).await,
                },
            }
        }
    }

    fn told(&mut self, told: &Told) {
        let mut view = self.view.borrow_mut();
        match told {
            Told::Model(label) => {
                label.clone_into(&mut view.model);
                let line = format!("  the next turns go to {label}");
                view.step(Tone::Plain, &line);
            }
            Told::Compacted { messages, tokens } => {
                let line = format!(
                    "  compacted: {messages} messages (about {tokens} tokens) are now one summary; the last answer is kept whole"
                );
                view.step(Tone::Plain, &line);
            }
            Told::Refused(why) => view.step(Tone::Asks, &format!("chock: {why}")),
        }
    }

    fn cut(&self) -> impl Future<Output = ()> + 'static {
        let armed = Rc::clone(&self.armed);
        let ctrl_c = self.ctrl_c.clone();
        async move {
            ctrl_c.pressed().await;
            armed.set(true);
        }
    }
}

/// Carries out a slash command.
async fn run_command(view: &Shared, started: &Started, command: Slash) {
    let id = view.borrow().id.clone();
    match command {
        Slash::Help => {
            let mut view = view.borrow_mut();
            for line in HELP.lines() {
                view.step(Tone::Plain, &format!("  {line}"));
            }
        }
        Slash::Plan => view.borrow_mut().show_plan(),
        Slash::Usage => {
            let mut view = view.borrow_mut();
            let usage = view.usage;
            let line = format!(
                "  {} model calls · {} tokens in ({} from the cache) · {} tokens out",
                view.model_calls, usage.input_tokens, usage.cache_read_tokens, usage.output_tokens
            );
            view.step(Tone::Plain, &line);
        }
        Slash::Show(number) => show(view, number),
        Slash::Model(_) => {
            let mut view = view.borrow_mut();
            let line = format!(
                "  the model is {}; /model <instance>/<model> switches the next turns to another that config.zon names",
                view.model
            );
            view.step(Tone::Plain, &line);
        }
        // Carried out by the session (`Next::Compact`).
        Slash::Compact => {}
        Slash::Diff => chock(view, &["workspace", "diff", &id], None).await,
        Slash::Apply => chock(view, &["workspace", "apply", &id], None).await,
        Slash::Detach => {
            view.borrow_mut().step(
                Tone::Dim,
                "  handing the session to the daemon (chock detach); it carries on there",
            );
            chock(view, &["detach", &id], Some(started)).await;
        }
        Slash::Unknown(word) => view.borrow_mut().step(
            Tone::Asks,
            &format!("chock: /{word} is not a command here; /help lists them"),
        ),
    }
}

/// Runs `chock <args>` on this terminal and waits for it; or, given
/// `leave`, leaves it running there (a detach: the session answers its
/// ask at the prompt, and the program waits for it before exiting).
async fn chock(view: &Shared, args: &[&str], leave: Option<&Started>) {
    let program = match std::env::current_exe() {
        Ok(program) => program,
        Err(err) => {
            view.borrow_mut().step(
                Tone::Asks,
                &format!(
                    "chock: cannot find this program to run `chock {}`: {err}",
                    args.join(" ")
                ),
            );
            return;
        }
    };
    let said = match leave {
        Some(started) => match std::process::Command::new(program).args(args).spawn() {
            Ok(child) => {
                started.0.borrow_mut().push(child);
                None
            }
            Err(err) => Some(format!("cannot run `chock {}`: {err}", args.join(" "))),
        },
        None => match tokio::process::Command::new(program).args(args).spawn() {
            Ok(mut child) => match child.wait().await {
                Ok(_) => None,
                Err(err) => Some(format!(
                    "waiting for `chock {}` failed: {err}",
                    args.join(" ")
                )),
            },
            Err(err) => Some(format!("cannot run `chock {}`: {err}", args.join(" "))),
        },
    };
    if let Some(said) = said {
        view.borrow_mut()
            .step(Tone::Asks, &format!("chock: {said}"));
    }
}

/// `/show`: a call's whole result, read back from the log.
fn show(view: &Shared, number: Option<usize>) {
    let mut view = view.borrow_mut();
    let count = view.calls.len();
    let at = match number {
        None if count > 0 => count - 1,
        Some(n) if (1..=count).contains(&n) => n - 1,
        _ => {
            let line = format!(
                "chock: there is no call {} to show; this session made {count}",
                number.unwrap_or(0)
            );
            view.step(Tone::Asks, &line);
            return;
        }
    };
    let call = view.calls[at].clone();
    let output = read_after(&view.log, EventId::NONE).ok().and_then(|batch| {
        batch
            .events
            .iter()
            .rev()
            .find_map(|raw| match raw.parse().ok()?.body {
                EventBody::ToolResult(result) if result.call_id == call.call_id => {
                    Some(result.output)
                }
                _ => None,
            })
    });
    let what = describe::essential(&call.tool, &call.arguments);
    view.step(
        Tone::Bold,
        &format!("● {} {}", call.tool, clean::visible(&what)),
    );
    if let Some(content) = call
        .arguments
        .get("content")
        .and_then(serde_json::Value::as_str)
    {
        for line in content.lines() {
            view.step(Tone::Added, &format!("    + {}", clean::visible(line)));
        }
    }
    match output {
        Some(output) => {
            for line in output.lines() {
                view.step(Tone::Plain, &format!("    {}", clean::visible(line)));
            }
        }
        None => view.step(Tone::Dim, "    (no result yet)"),
    }
}
