//! The retention policy the daemon runs by itself: `chock workspace prune`
//! with its defaults (docs/workspaces.md, "Retention"), first after five
//! minutes (or the period, when shorter) and then once a period, as a child
//! process of its own so a slow git never holds a connection.

use std::path::PathBuf;
use std::time::Duration;

use crate::Prune;

/// The longest the first prune waits after the daemon starts.
const FIRST_AFTER: Duration = Duration::from_secs(300);

pub(crate) async fn every(prune: Prune, state_dir: PathBuf) {
    let mut wait = prune.every.min(FIRST_AFTER);
    loop {
        tokio::time::sleep(wait).await;
        wait = prune.every;
        let out = tokio::process::Command::new(&prune.exe)
            .args(["workspace", "prune"])
            .env("CHOCK_STATE_DIR", &state_dir)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output()
            .await;
        match out {
            Ok(out) if out.status.success() => {
                let said = String::from_utf8_lossy(&out.stdout);
                for line in said.lines().filter(|l| l.starts_with("removed")) {
                    tracing::info!("workspace prune: {line}");
                }
            }
            Ok(out) => {
                tracing::warn!(
                    status = %out.status,
                    stderr = %String::from_utf8_lossy(&out.stderr).trim(),
                    "workspace prune failed"
                );
            }
            Err(err) => {
                tracing::warn!(%err, exe = %prune.exe.display(), "cannot run workspace prune");
            }
        }
    }
}
