//! The harness is chock-testkit's: a daemon in a temporary state directory
//! ([`TestDaemon`]), a project directory, a stand-in `chock` executable, raw
//! protocol exchanges, and a live log that a test appends to while holding
//! its lock. What is here is only what these tests share besides.

mod answer;
mod bad_input;
mod load;
mod peer;
mod protocol;
mod read_list;
mod spawn;
mod watch;
// The workspace and row-feed verbs.
mod rows;
mod workspace;

pub(crate) use chock_testkit::{
    GREETING, HasTestDirs, LiveLog, S1, S2, S3, StandIn, TestDaemon, eventually, read_all,
};

/// The ids of event lines.
pub(crate) fn ids(lines: &[String]) -> Vec<u64> {
    lines
        .iter()
        .map(|l| chock_control::EventLine::parse(l).unwrap().id)
        .collect()
}
