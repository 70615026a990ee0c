//! The files a style rule or a language server names: globs relative to
//! the project (or workspace) root, read the way `.gitignore` reads them.
//! A glob with no `/` matches a file's name in any directory (`*.py`); one
//! with a `/` matches the whole relative path, where `*` stops at a `/` and
//! `**` crosses any number of directories (`src/**/*.rs`).

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled set of such globs.
#[derive(Debug, Clone)]
pub struct FileGlobs {
    whole: GlobSet,
    names: GlobSet,
}

impl FileGlobs {
    /// Compiles `globs`; a glob that does not compile is named with why.
    pub fn new(globs: &[String]) -> Result<FileGlobs, String> {
        let mut whole = GlobSetBuilder::new();
        let mut names = GlobSetBuilder::new();
        for glob in globs {
            let bad = |err: globset::Error| format!("the glob {glob:?} does not compile: {err}");
            if glob.contains('/') {
                let pattern = glob.strip_prefix('/').unwrap_or(glob);
                whole.add(
                    GlobBuilder::new(pattern)
                        .literal_separator(true)
                        .build()
                        .map_err(bad)?,
                );
            } else {
                names.add(Glob::new(glob).map_err(bad)?);
            }
        }
        let build = |set: GlobSetBuilder| set.build().map_err(|err| err.to_string());
        Ok(FileGlobs {
            whole: build(whole)?,
            names: build(names)?,
        })
    }

    /// Whether `path` (relative, `/`-separated) is one of the files.
    pub fn matches(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.whole.is_match(path) || self.names.is_match(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_glob_matches_a_name_anywhere_and_a_path_glob_the_whole_path() {
        let globs = FileGlobs::new(&["*.py".to_owned(), "src/**/*.rs".to_owned()]).unwrap();
        assert!(globs.matches("a.py"));
        assert!(globs.matches("deep/down/a.py"));
        assert!(globs.matches("src/a.rs"));
        assert!(globs.matches("src/x/y/a.rs"));
        assert!(!globs.matches("tests/a.rs"));
        assert!(!globs.matches("a.pyc"));
        assert!(FileGlobs::new(&["a[".to_owned()]).is_err());
    }
}
