//! The client's half of the greeting: read the daemon's first line and
//! compare numbers.
//!
//! The client checks the number and not the shape of the reply, so a daemon
//! of any age that names a number in its first line is understood: equal
//! numbers proceed, different numbers are refused naming both. The daemon's
//! half lives in [`crate::Request::Hello`] and [`crate::Reply`].

use crate::{PROTOCOL_NAME, reply};

/// The greeting a client sends: `hello chock-control <n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Greeting {
    pub protocol: u32,
}

impl Greeting {
    pub fn to_line(self) -> String {
        format!("hello {PROTOCOL_NAME} {}\n", self.protocol)
    }
}

/// Why the daemon's answer to the greeting does not let the client proceed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreetingError {
    #[error(
        "protocol mismatch: the daemon speaks {PROTOCOL_NAME} {daemon} and this client \
         {PROTOCOL_NAME} {client}; update the older of the two"
    )]
    Mismatch { daemon: u32, client: u32 },
    #[error("the daemon refused the connection: {0}")]
    Refused(String),
    #[error(
        "the other end did not answer the greeting with a protocol number (it said '{0}'): \
         is it a chock daemon?"
    )]
    NotAGreeting(String),
}

/// Checks the daemon's first line against this client's number.
pub fn check_greeting_reply(line: &str, client: u32) -> Result<(), GreetingError> {
    let head = line.split('\t').next().unwrap_or(line);
    let mut words = head.split(' ');
    let number = loop {
        match words.next() {
            Some(PROTOCOL_NAME) => break words.next().and_then(|n| n.parse::<u32>().ok()),
            Some(_) => {}
            None => break None,
        }
    };
    match number {
        Some(daemon) if daemon != client => Err(GreetingError::Mismatch { daemon, client }),
        Some(_) if head.starts_with("ok ") => Ok(()),
        _ => match reply::error_message(line) {
            Some(message) => Err(GreetingError::Refused(message.to_owned())),
            None => Err(GreetingError::NotAGreeting(crate::sanitize(line))),
        },
    }
}
