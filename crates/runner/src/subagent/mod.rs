//! Subagents (docs/subagents.md): a session's `spawn_agent` starts a child
//! `chock run`, a session of its own with its own log, linked both ways
//! (the parent's `tool.call` names the child, the child's `session.open`
//! its parent). The child is a process, not a task of the parent's: it can
//! crash, be killed or be stopped alone, and everything that already reads
//! a session (`chock log`, `chock sessions`, the daemon, the browser) reads
//! it unchanged.
//!
//! Never wider than the parent: the child loads the same policy files,
//! replays the parent's promises and grants up to the spawn and fixes the
//! promises in place (`Judge::inherit`), takes the parent's `sandbox.jit`
//! as recorded, and has its model decided at `model.select` by the parent
//! before it starts. A person's yes in the child cannot lift a deny or an
//! inherited promise: `request_action` refuses those in every session.
//!
//! The pieces: `agents.rs` is what a session needs to start children (and,
//! for a child, `lineage.rs`, what it is a child of); `children.rs` keeps
//! the live children and records their ends; `spawn.rs` carries out the
//! call; `child.rs` is the child's own start; `tree.rs` reads a tree of
//! sessions (depth, tokens, how a child ended). The session's own files
//! name only the first three and `lineage.rs`, which name nothing of the
//! session, so no file imports in a circle.

mod agents;
mod child;
mod children;
mod lineage;
mod spawn;
mod tree;

pub use agents::Agents;
pub(crate) use child::run_child;
pub(crate) use children::Children;
pub(crate) use lineage::Lineage;
pub use lineage::LineageError;
pub use tree::{TreeRow, TreeUsage, tree_usage};
