//! Action names: the keys every question Chock asks carries.
//!
//! An [`Action`] can only be made by a typed builder (or by [`Action::parse`],
//! which reads a written name back through those same builders), so every
//! value of the type is a name the policy reference defines, with each
//! segment checked. Names a stranger chooses (a skill's, a package's) never
//! become a segment: skills are named by layer, store programs by hash.

mod build;
mod error;
mod exec;
mod host;
pub(crate) mod label;
mod parse;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use error::ActionError;
pub use exec::{ExecClass, ExecContext, is_store_hash};

/// A validated action name such as `net.fetch.org.ziglang.docs`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Action {
    name: String,
}

impl Action {
    /// Only the builders in this module make an `Action`.
    fn new(name: String) -> Action {
        Action { name }
    }

    /// The name as written in a rule.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The dot-separated segments, widest first.
    pub fn segments(&self) -> std::str::Split<'_, char> {
        self.name.split('.')
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name)
    }
}

/// Read back through [`Action::parse`], so a stored name is checked as
/// strictly as a written one.
impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Action::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for Action {
    type Err = ActionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Action::parse(s)
    }
}

/// The layer a skill came from; the only thing `skill.read.*` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillLayer {
    /// The operator's own skills directory.
    Operator,
    /// A skill the project's repository carries.
    Project,
    /// A skill a package brought.
    Packaged,
}

impl SkillLayer {
    /// The segment after `skill.read.`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillLayer::Operator => "operator",
            SkillLayer::Project => "project",
            SkillLayer::Packaged => "packaged",
        }
    }
}
