//! `job_output`: what a background job printed lately and whether it has
//! ended. It reads what a call already decided started, so it is decided
//! nowhere; the session's jobs (`crate::jobs`) answer it.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::jobs::MAX_WAIT_SECS;
use crate::tool::Tool;

/// Read a background job's output (the latest 64 KiB of stdout and of stderr)
/// and whether it has ended. Background jobs are started by run_command with
/// "background": true; they are killed when the session ends.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The job id run_command answered
    pub job: String,
    /// Wait up to this many seconds for the job to end first (default 0)
    #[schemars(range(max = MAX_WAIT_SECS))]
    pub wait_secs: Option<u64>,
}

impl Tool for Args {
    const NAME: &'static str = "job_output";
}
