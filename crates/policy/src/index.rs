//! Matching by segment: a trie over the dot-separated segments of every rule
//! key in one layer, so a lookup costs one step per segment of the action
//! rather than one comparison per rule.
//!
//! A node holds the exact rule that ends there and the class rule whose
//! prefix ends there. Walking an action's segments, every class passed on the
//! way matches (it covers names strictly longer than its prefix), the deepest
//! is the most specific, an exact rule at the last node beats all of them, and
//! the layer's catch-all answers only when nothing else does.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::pattern::Pattern;
use crate::rule::Rule;

/// FNV-1a: segments are short and chosen by the person writing the policy,
/// so a keyed hash buys nothing here and SipHash would dominate a lookup.
#[derive(Debug, Default, Clone, Copy)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

#[derive(Debug, Default, Clone)]
struct Node {
    children: HashMap<Box<str>, u32, BuildHasherDefault<Fnv>>,
    exact: Option<u32>,
    class: Option<u32>,
}

/// The index of one layer's rules. Rule ids are positions in the layer.
#[derive(Debug, Clone)]
pub(crate) struct Index {
    nodes: Vec<Node>,
    catch_all: Option<u32>,
}

impl Index {
    /// Indexes `rules`; where two rules have the same key the first is kept
    /// (a loaded file with a duplicate key is refused before it gets here).
    pub(crate) fn build(rules: &[Rule]) -> Index {
        let mut index = Index {
            nodes: vec![Node::default()],
            catch_all: None,
        };
        for (id, rule) in rules.iter().enumerate() {
            let id = id as u32;
            let (key, exact) = match &rule.pattern {
                Pattern::CatchAll => {
                    index.catch_all.get_or_insert(id);
                    continue;
                }
                Pattern::Exact(a) => (a.as_str(), true),
                Pattern::Class(p) => (p.as_str(), false),
            };
            let mut node = 0usize;
            for seg in key.split('.') {
                let next = index.nodes.len() as u32;
                let child = *index.nodes[node].children.entry(seg.into()).or_insert(next);
                if child == next {
                    index.nodes.push(Node::default());
                }
                node = child as usize;
            }
            let slot = if exact {
                &mut index.nodes[node].exact
            } else {
                &mut index.nodes[node].class
            };
            slot.get_or_insert(id);
        }
        index
    }

    /// The most specific rule matching `action`, if any.
    pub(crate) fn best(&self, action: &str) -> Option<u32> {
        let mut node = &self.nodes[0];
        let mut class = None;
        for seg in action.split('.') {
            if node.class.is_some() {
                class = node.class;
            }
            match node.children.get(seg) {
                Some(&next) => node = &self.nodes[next as usize],
                None => return class.or(self.catch_all),
            }
        }
        node.exact.or(class).or(self.catch_all)
    }

    /// Every rule matching `action`, most specific first.
    pub(crate) fn all(&self, action: &str) -> Vec<u32> {
        let mut classes = Vec::new();
        let mut node = Some(&self.nodes[0]);
        for seg in action.split('.') {
            let Some(n) = node else { break };
            if let Some(c) = n.class {
                classes.push(c);
            }
            node = n.children.get(seg).map(|&next| &self.nodes[next as usize]);
        }
        let mut out: Vec<u32> = node.and_then(|n| n.exact).into_iter().collect();
        out.extend(classes.into_iter().rev());
        out.extend(self.catch_all);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Decision;

    fn rules(keys: &[Option<&str>]) -> Vec<Rule> {
        keys.iter()
            .map(|k| Rule::parse(*k, Decision::Allow).unwrap())
            .collect()
    }

    #[test]
    fn exact_beats_longer_class_beats_shorter_class_beats_catch_all() {
        let r = rules(&[
            None,
            Some("net.*"),
            Some("net.fetch.*"),
            Some("net.fetch.org.ziglang.docs"),
        ]);
        let ix = Index::build(&r);
        assert_eq!(ix.best("net.fetch.org.ziglang.docs"), Some(3));
        assert_eq!(ix.all("net.fetch.org.ziglang.docs"), vec![3, 2, 1, 0]);
        assert_eq!(ix.best("net.fetch.org.ziglang"), Some(2));
        assert_eq!(ix.best("net.connect.com.github"), Some(1));
        assert_eq!(ix.best("call.read_file"), Some(0));
        assert_eq!(ix.all("call.read_file"), vec![0]);
    }

    #[test]
    fn a_class_does_not_match_its_own_prefix() {
        let ix = Index::build(&rules(&[Some("workspace.*"), Some("lsp.*")]));
        assert_eq!(ix.best("workspace.integrate"), Some(0));
        assert_eq!(ix.best("lsp.zls"), Some(1));
        assert_eq!(ix.best("lsp"), None);
    }

    #[test]
    fn index_agrees_with_a_linear_scan() {
        let r = rules(&[
            Some("net.fetch.org.*"),
            Some("net.fetch.org.ziglang.*"),
            Some("git.commit"),
            Some("git.*"),
            Some("git.branch.*"),
        ]);
        let ix = Index::build(&r);
        for action in [
            "net.fetch.org.ziglang.docs",
            "net.fetch.org.x",
            "git.commit",
            "git.branch.delete",
            "git.push",
            "call.x",
        ] {
            let linear = r
                .iter()
                .enumerate()
                .filter(|(_, rule)| rule.pattern.matches(action))
                .max_by_key(|(_, rule)| rule.pattern.specificity())
                .map(|(i, _)| i as u32);
            assert_eq!(ix.best(action), linear, "{action}");
        }
    }
}

/// The fixed layers' indexes merged into one trie, so the hot path walks an
/// action's segments once instead of once per layer. Slot `i` of every
/// array belongs to the `i`th layer given to [`Merged::build`].
#[derive(Debug, Clone)]
pub(crate) struct Merged<const N: usize> {
    nodes: Vec<MergedNode<N>>,
    catch_all: [Option<u32>; N],
}

#[derive(Debug, Clone)]
struct MergedNode<const N: usize> {
    children: HashMap<Box<str>, u32, BuildHasherDefault<Fnv>>,
    exact: [Option<u32>; N],
    class: [Option<u32>; N],
}

impl<const N: usize> Default for MergedNode<N> {
    fn default() -> Self {
        MergedNode {
            children: HashMap::default(),
            exact: [None; N],
            class: [None; N],
        }
    }
}

impl<const N: usize> Merged<N> {
    /// Merges `layers`; a layer that is absent is an empty slice.
    pub(crate) fn build(layers: [&[Rule]; N]) -> Merged<N> {
        let mut m = Merged {
            nodes: vec![MergedNode::default()],
            catch_all: [None; N],
        };
        for (slot, rules) in layers.iter().enumerate() {
            for (id, rule) in rules.iter().enumerate() {
                let id = id as u32;
                let (key, exact) = match &rule.pattern {
                    Pattern::CatchAll => {
                        m.catch_all[slot].get_or_insert(id);
                        continue;
                    }
                    Pattern::Exact(a) => (a.as_str(), true),
                    Pattern::Class(p) => (p.as_str(), false),
                };
                let mut node = 0usize;
                for seg in key.split('.') {
                    let next = m.nodes.len() as u32;
                    let child = *m.nodes[node].children.entry(seg.into()).or_insert(next);
                    if child == next {
                        m.nodes.push(MergedNode::default());
                    }
                    node = child as usize;
                }
                let n = &mut m.nodes[node];
                let target = if exact {
                    &mut n.exact[slot]
                } else {
                    &mut n.class[slot]
                };
                target.get_or_insert(id);
            }
        }
        m
    }

    /// Each layer's most specific rule for `action`, as [`Index::best`] would
    /// give it layer by layer.
    pub(crate) fn best(&self, action: &str) -> [Option<u32>; N] {
        let mut node = &self.nodes[0];
        let mut class = [None; N];
        let mut walked_all = true;
        for seg in action.split('.') {
            for (c, n) in class.iter_mut().zip(node.class.iter()) {
                if n.is_some() {
                    *c = *n;
                }
            }
            match node.children.get(seg) {
                Some(&next) => node = &self.nodes[next as usize],
                None => {
                    walked_all = false;
                    break;
                }
            }
        }
        let mut out = [None; N];
        for i in 0..N {
            let exact = if walked_all { node.exact[i] } else { None };
            out[i] = exact.or(class[i]).or(self.catch_all[i]);
        }
        out
    }
}

#[cfg(test)]
mod merged_tests {
    use super::*;
    use crate::Decision;

    #[test]
    fn merged_agrees_with_each_layer_alone() {
        let mk = |keys: &[Option<&str>]| -> Vec<Rule> {
            keys.iter()
                .map(|k| Rule::parse(*k, Decision::Allow).unwrap())
                .collect()
        };
        let a = mk(&[
            Some("net.*"),
            Some("net.fetch.org.ziglang.docs"),
            Some("call.read_file"),
        ]);
        let b = mk(&[None, Some("net.fetch.*"), Some("git.commit")]);
        let c = mk(&[]);
        let m = Merged::build([&a, &b, &c]);
        let ixs = [Index::build(&a), Index::build(&b), Index::build(&c)];
        for action in [
            "net.fetch.org.ziglang.docs",
            "net.fetch.org.ziglang",
            "net.connect.x",
            "call.read_file",
            "git.commit",
            "git.push",
            "lsp.zls",
            "net",
        ] {
            let want: Vec<Option<u32>> = ixs.iter().map(|ix| ix.best(action)).collect();
            assert_eq!(m.best(action).to_vec(), want, "{action}");
        }
    }
}
