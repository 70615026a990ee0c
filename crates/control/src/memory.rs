//! Giving memory back after a burst. glibc's allocator keeps what a burst
//! of connections freed in its arenas (one per thread that allocated), so a
//! server's resident size stays at its peak long after the connections
//! left. [`trim_after_bursts`] watches how many connections are open and,
//! once they have fallen well below the peak since the last trim, asks the
//! allocator to return its free pages (`malloc_trim`). At rest it costs one
//! look every few seconds. Measured in docs/performance.md ("Daemon under
//! load").

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// How often the number of open connections is looked at.
const LOOK: Duration = Duration::from_secs(2);

/// Runs until the runtime stops: trims once the connections open (the
/// permits taken from `open`, of `max`) have fallen to half the peak since
/// the last trim, or to none after any.
pub async fn trim_after_bursts(open: Arc<Semaphore>, max: usize) {
    let mut peak = 0usize;
    let mut ticks = tokio::time::interval(LOOK);
    loop {
        ticks.tick().await;
        let now = max.saturating_sub(open.available_permits());
        peak = peak.max(now);
        if peak > 0 && (now == 0 || now <= peak / 2) {
            trim();
            peak = now;
        }
    }
}

/// Returns the allocator's free memory to the system, where it can.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes a size and touches only the
        // allocator's own state, under its own locks.
        #[expect(unsafe_code, reason = "glibc's malloc_trim has no safe wrapper")]
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
