//! `job_output`: what a background job printed lately and whether it has
//! ended. It reads what a call already decided started, so it is decided
//! nowhere; the session's jobs (`crate::jobs`) answer it.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::jobs::MAX_WAIT_SECS;
use crate::tool::Tool;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub job: String,
    #[serde(default)]
    pub wait_secs: Option<u64>,
}

impl Tool for Args {
    const NAME: &'static str = "job_output";

    fn schema() -> (&'static str, Value) {
        (
            "Read a background job's output (the latest 64 KiB of stdout and of stderr) and whether it has ended. \
    Background jobs are started by run_command with \"background\": true; they are killed when the session ends.",
            json!({
                "type": "object",
                "properties": {
                    "job": {"type": "string", "description": "The job id run_command answered"},
                    "wait_secs": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": MAX_WAIT_SECS,
                        "description": "Wait up to this many seconds for the job to end first (default 0)"
                    }
                },
                "required": ["job"],
                "additionalProperties": false
            }),
        )
    }
}
