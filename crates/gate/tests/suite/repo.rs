//! Worktree → main checkout resolution agrees with `git rev-parse --git-common-dir`.

use std::path::{Path, PathBuf};

use chock_gate::repo::discover;

use super::{git, repo};

fn git_common_checkout(dir: &Path) -> PathBuf {
    let common = git(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let common = std::fs::canonicalize(common.trim()).unwrap();
    common.parent().unwrap().to_owned()
}

#[test]
fn plain_repo_subdirectory_and_linked_worktree_all_resolve_to_the_main_checkout() {
    let root = tempfile::tempdir().unwrap();
    let main = repo(root.path(), "shop");
    std::fs::create_dir_all(main.join("src/deep")).unwrap();
    let wt = root.path().join("shop-feature");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::create_dir_all(wt.join("nested")).unwrap();
    for dir in [
        main.clone(),
        main.join("src/deep"),
        wt.clone(),
        wt.join("nested"),
    ] {
        let found = discover(&dir).unwrap().unwrap();
        assert_eq!(found.main_checkout, main, "{}", dir.display());
        assert_eq!(
            found.main_checkout,
            git_common_checkout(&dir),
            "{}",
            dir.display()
        );
    }
}

#[test]
fn a_directory_outside_any_repository_has_none() {
    let root = tempfile::tempdir().unwrap();
    assert_eq!(discover(root.path()).unwrap(), None);
}

#[test]
fn a_dot_git_file_that_is_not_a_gitdir_pointer_is_an_error() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join(".git"), "garbage\n").unwrap();
    assert!(discover(root.path()).is_err());
}
