//! The grammars a rule may parse with, one grammar crate each, and the
//! file extensions that name them.

use tree_sitter::Language;

/// A language a rule's query is written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grammar {
    Rust,
    Python,
    TypeScript,
    Tsx,
    Nix,
}

impl Grammar {
    pub const ALL: [Grammar; 5] = [
        Grammar::Rust,
        Grammar::Python,
        Grammar::TypeScript,
        Grammar::Tsx,
        Grammar::Nix,
    ];

    /// Its name in a rule's `.language`.
    pub fn name(self) -> &'static str {
        match self {
            Grammar::Rust => "rust",
            Grammar::Python => "python",
            Grammar::TypeScript => "typescript",
            Grammar::Tsx => "tsx",
            Grammar::Nix => "nix",
        }
    }

    fn extensions(self) -> &'static [&'static str] {
        match self {
            Grammar::Rust => &["rs"],
            Grammar::Python => &["py", "pyi"],
            Grammar::TypeScript => &["ts", "mts", "cts"],
            Grammar::Tsx => &["tsx"],
            Grammar::Nix => &["nix"],
        }
    }

    /// The grammar `.language` names.
    pub fn named(name: &str) -> Option<Grammar> {
        Grammar::ALL.into_iter().find(|g| g.name() == name)
    }

    /// The grammar a glob's or a path's extension names (`src/**/*.rs`).
    pub fn of_extension(path: &str) -> Option<Grammar> {
        let ext = path.rsplit_once('.')?.1;
        Grammar::ALL
            .into_iter()
            .find(|g| g.extensions().contains(&ext))
    }

    /// Every grammar's name, for an error that lists them.
    pub fn names() -> String {
        Grammar::ALL.map(Grammar::name).join(", ")
    }

    pub(crate) fn language(self) -> Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Grammar::Nix => tree_sitter_nix::LANGUAGE.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads_into_a_parser() {
        for grammar in Grammar::ALL {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&grammar.language()).unwrap();
            assert_eq!(Grammar::named(grammar.name()), Some(grammar));
        }
        assert_eq!(Grammar::of_extension("src/**/*.rs"), Some(Grammar::Rust));
        assert_eq!(Grammar::of_extension("a.tsx"), Some(Grammar::Tsx));
        assert_eq!(Grammar::of_extension("go.mod"), None);
    }
}
