//! Shared shapes of human output for the subcommands: aligned tables, and
//! writing to a stdout whose reader may have gone away (`| head`).

/// Columns padded to their widest cell; `right` lists the columns aligned
/// right (numbers). The last column is never padded on the right.
pub(crate) fn render_table<const N: usize>(
    header: &[&str; N],
    rows: &[[String; N]],
    right: &[usize],
) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let head = header.map(str::to_owned);
    for row in std::iter::once(&head).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i] - cell.chars().count();
            if right.contains(&i) {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < N {
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Turn the outcome of writing to stdout into "go on" (`true`), "the reader
/// went away" (`false`, as when piped into `head`), or an error.
pub(crate) fn print_result(written: std::io::Result<()>) -> anyhow::Result<bool> {
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(anyhow::Error::new(e).context("cannot write to stdout")),
    }
}

/// The session a report is of, and whether it is printed for a script:
/// `chock usage` and `chock plan` take these alike.
#[derive(Debug, clap::Args)]
pub(crate) struct OfSession {
    /// The session id (see `chock sessions`).
    pub(crate) session: String,

    /// One JSON object on one line, stable for scripts (docs/cli.md gives its shape).
    #[arg(long)]
    pub(crate) json: bool,
}

impl OfSession {
    /// The session's id and its log folded, each line the fold left out
    /// warned about on stderr.
    pub(crate) fn fold(&self) -> anyhow::Result<(chock_log::SessionId, chock_log::SessionState)> {
        use anyhow::Context as _;
        let state = chock_log::StateDir::resolve().context("cannot read the session log")?;
        let (id, path) = state.find_session(&self.session)?;
        let folded = chock_log::fold_log(&path)?;
        for problem in &folded.problems {
            eprintln!("chock: warning: {}: {problem}", path.display());
        }
        Ok((id, folded.state))
    }
}

/// `--host` and `--port` as the TCP address a server listens on (`default`
/// the port when only `--host` is given). `--port` alone is refused:
/// `without` says what the server listens on then.
pub(crate) fn tcp_address(
    host: Option<String>,
    port: Option<u16>,
    default: u16,
    without: &str,
) -> anyhow::Result<Option<(String, u16)>> {
    match (host, port) {
        (None, Some(port)) => anyhow::bail!(
            "--port was given without --host: {without} unless --host names an address \
             (for example --host 127.0.0.1 --port {port})"
        ),
        (host, port) => Ok(host.map(|host| (host, port.unwrap_or(default)))),
    }
}

/// Prints a server's addresses, a line each, as it starts listening.
pub(crate) fn announce(addresses: &[chock_control::Address], then: Option<&str>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    for address in addresses {
        let _ = writeln!(out, "listening on {address}");
    }
    if let Some(line) = then {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// `println!` for a subcommand's output that never panics on a closed
/// pipe: a reader that went away (`| head`, `| true`) ends nothing, and the
/// command's exit code stays its own (`chock sync --check | true` still
/// exits 3 when a client is not wired).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// [`outln!`] without the newline, flushed (a prompt).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout();
        let _ = write!(stdout, $($arg)*);
        let _ = stdout.flush();
    }};
}

pub(crate) use {out, outln};
