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
