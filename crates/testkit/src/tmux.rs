//! A real pseudo-terminal for tests: a tmux server of the test's own (its
//! socket in a temporary directory, no config file read), one window
//! running the command under test, keys typed and text pasted as a person
//! would (a paste is bracketed, as a terminal sends it), and the screen
//! read back as text. tmux is Debian's `tmux`; `.ci/run` installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// How long a test waits for the screen to show something.
pub const SCREEN_WAIT: Duration = Duration::from_secs(30);

/// One tmux server and its one window; killed when dropped.
#[derive(Debug)]
pub struct Tmux {
    dir: tempfile::TempDir,
    socket: PathBuf,
}

impl Tmux {
    /// Starts `program` with `args` in a `cols`×`rows` window, in `cwd`,
    /// with `env` set (and `TERM=xterm-256color`). The window stays once
    /// the program exits, so its last screen can be read.
    #[must_use]
    pub fn start(
        program: &Path,
        args: &[&str],
        env: &[(&str, &Path)],
        cwd: &Path,
        cols: u16,
        rows: u16,
    ) -> Tmux {
        let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("no temp dir for tmux: {err}"));
        let socket = dir.path().join("tmux.sock");
        let tmux = Tmux { dir, socket };
        let mut command = tmux.command();
        command
            .args(["-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(cols.to_string())
            .arg("-y")
            .arg(rows.to_string())
            .arg("-c")
            .arg(cwd)
            .args(["-e", "TERM=xterm-256color"]);
        for (name, value) in env {
            command.arg("-e").arg(format!("{name}={}", value.display()));
        }
        // The program runs under a shell that says how it exited: tmux,
        // started from a test, does not always reap its pane's process in
        // time to say so itself. The shell keeps Ctrl-C (SIGINT to the
        // whole foreground group) from ending it; the program's own
        // handling is unchanged (a trapped signal is reset by exec).
        command
            .args([
                "--",
                "sh",
                "-c",
                r#"trap : INT; "$0" "$@"; echo "[exited $?]""#,
            ])
            .arg(program)
            .args(args);
        tmux.check(command.output(), "new-session");
        tmux.run(&["set-option", "-g", "remain-on-exit", "on"]);
        tmux
    }

    fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(&self.socket);
        command
    }

    fn check(&self, out: std::io::Result<Output>, what: &str) -> String {
        let out = out.unwrap_or_else(|err| panic!("cannot run tmux {what}: {err}"));
        assert!(
            out.status.success(),
            "tmux {what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs a tmux command against this server; its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output();
        self.check(out, args.first().copied().unwrap_or(""))
    }

    /// Types `keys` (tmux key names: `Enter`, `C-c`, or literal text with
    /// `literal`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Types `text` as it is, character by character.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "0", "-l", text]);
    }

    /// Pastes `text` as a terminal does, bracketed.
    pub fn paste(&self, text: &str) {
        let file = self.dir.path().join("paste");
        std::fs::write(&file, text).unwrap_or_else(|err| panic!("cannot write the paste: {err}"));
        let file = file.to_string_lossy().into_owned();
        self.run(&["load-buffer", "-b", "paste", &file]);
        self.run(&["paste-buffer", "-p", "-d", "-b", "paste", "-t", "0"]);
    }

    /// Resizes the window.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "0",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// The screen and its scrollback as plain text.
    #[must_use]
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "0"])
    }

    /// The screen as the terminal shows it, with its colours and
    /// emphasis as escape sequences.
    #[must_use]
    pub fn screen_with_escapes(&self) -> String {
        self.run(&["capture-pane", "-p", "-e", "-J", "-S", "-", "-t", "0"])
    }

    /// Calls `probe` until it returns `Some`; panics naming `what`, with
    /// the screen, once [`SCREEN_WAIT`] has passed.
    pub fn until<T>(&self, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + SCREEN_WAIT;
        loop {
            if let Some(found) = probe() {
                return found;
            }
            if std::time::Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}; the screen:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows `text`; the screen then.
    pub fn wait_for(&self, text: &str) -> String {
        self.until(&format!("the screen to show {text:?}"), || {
            let screen = self.screen();
            screen.contains(text).then_some(screen)
        })
    }

    /// Waits until `text` is shown `times` times; the screen then.
    pub fn wait_for_times(&self, text: &str, times: usize) -> String {
        self.until(
            &format!("the screen to show {text:?} {times} times"),
            || {
                let screen = self.screen();
                (screen.matches(text).count() >= times).then_some(screen)
            },
        )
    }

    /// Closes the window as a person closing the terminal does: the
    /// program gets SIGHUP.
    pub fn close(&self) {
        self.run(&["kill-window", "-t", "0"]);
    }

    /// Waits for the program to exit; its exit status, as the shell it
    /// runs under says it.
    pub fn wait_for_exit(&self) -> i32 {
        self.until("the program to exit", || {
            let screen = self.screen();
            let at = screen.rfind("[exited ")?;
            let rest = &screen[at + "[exited ".len()..];
            rest[..rest.find(']')?].parse().ok()
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}
