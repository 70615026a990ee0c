//! The git directory a session's sandboxed commands use, and how their
//! commits come back.
//!
//! A command's git never touches the person's repository. It works in a
//! private git directory of the session's own (`<session dir>/git`, bound
//! read-write at [`INSIDE_GIT`]), which the host fills once, when it does
//! not exist yet: `HEAD` on the session's branch, the branch at its tip, a
//! snapshot of the person's branches and tags as packed refs, the index,
//! and an alternate naming the person's object store, bound read-only at
//! [`INSIDE_OBJECTS`], so history is read in place and new objects land in
//! the private directory. The worktree's `.git` is covered, inside, by a
//! read-only file naming [`INSIDE_GIT`], so the command cannot point its
//! git anywhere else either.
//!
//! After a command, the host looks at one thing in that directory: the
//! session branch's ref, read without following links, bounded, and only
//! if it is a bare object id. When it moved, the host copies the private
//! objects (regular files only, opened beneath a directory it opened, never
//! through a link) into a directory of its own, has git repack them with
//! `index-pack --strict` into the person's store (which names every object
//! by its content and refuses malformed ones), checks that the new tip is
//! a fast-forward of the branch and that everything it reaches is present,
//! and only then moves `refs/heads/chock/<id>` (from the value it checked). No
//! git of the host ever reads the private directory's config, hooks, HEAD
//! or alternates. Anything else a command changed there is named in a
//! notice ([`SandboxGit::inspect`]) and otherwise ignored.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use chock_sandbox::Bind;

use super::WorkspaceError;
use super::beneath::{copy_objects, read_private};
use super::host_git::GitPaths;

/// Where the private git directory appears inside the sandbox.
pub const INSIDE_GIT: &str = "/run/chock/git";
/// Where the person's object store appears inside, read-only.
pub const INSIDE_OBJECTS: &str = "/run/chock/objects";
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n";

/// One session's private git directory and the checkout it serves.
#[derive(Debug, Clone)]
pub struct SandboxGit {
    /// The private git directory on the host.
    pub dir: PathBuf,
    /// The file bound over the worktree's `.git` inside.
    pointer: PathBuf,
    /// The host's copy of the config it wrote into the private directory,
    /// to tell a command's changes by.
    written_config: PathBuf,
    /// A directory of the host's own, for imports.
    scratch: PathBuf,
    pub paths: GitPaths,
    /// `chock/<id>`.
    pub branch: String,
    /// The commit the session started at.
    pub start: String,
}

impl SandboxGit {
    /// The private git directory of the session whose own directory is
    /// `session_dir`.
    pub fn new(session_dir: &Path, paths: GitPaths, branch: &str, start: &str) -> SandboxGit {
        SandboxGit {
            dir: session_dir.join("git"),
            pointer: session_dir.join("git-pointer"),
            written_config: session_dir.join("git-config"),
            scratch: session_dir.join("git-import"),
            paths,
            branch: branch.to_owned(),
            start: start.to_owned(),
        }
    }

    fn branch_ref(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }

    /// Fills the private directory when it does not exist yet. An existing
    /// one is never written by the host: a command may have put links in it.
    pub fn ensure(&self) -> Result<(), WorkspaceError> {
        if fs::symlink_metadata(&self.dir).is_ok() {
            return Ok(());
        }
        let io = |what, path: &Path| {
            let path = path.to_owned();
            move |source| WorkspaceError::Io {
                what,
                path,
                error: source,
            }
        };
        let tip = self.real_tip()?;
        let building = self.dir.with_extension("new");
        let _ = fs::remove_dir_all(&building);
        let mut dirs = fs::DirBuilder::new();
        dirs.recursive(true).mode(0o700);
        for sub in [
            "objects/info",
            "objects/pack",
            "refs/tags",
            "info",
            &format!("refs/heads/{}", parent_of(&self.branch)),
        ] {
            dirs.create(building.join(sub))
                .map_err(io("create", &building.join(sub)))?;
        }
        let write = |rel: &str, text: &[u8]| {
            let path = building.join(rel);
            fs::write(&path, text).map_err(io("write", &path))
        };
        write("HEAD", format!("ref: {}\n", self.branch_ref()).as_bytes())?;
        let config = self.config()?;
        write("config", config.as_bytes())?;
        fs::write(&self.written_config, &config).map_err(io("write", &self.written_config))?;
        write(
            "objects/info/alternates",
            format!("{INSIDE_OBJECTS}\n").as_bytes(),
        )?;
        write(&self.branch_ref(), format!("{tip}\n").as_bytes())?;
        write("packed-refs", self.snapshot()?.as_bytes())?;
        for (from, to) in [
            (self.paths.git_dir.join("index"), "index"),
            (self.paths.common.join("shallow"), "shallow"),
            (self.paths.common.join("info/exclude"), "info/exclude"),
        ] {
            if from.is_file() {
                fs::copy(&from, building.join(to)).map_err(io("copy", &from))?;
            }
        }
        fs::write(&self.pointer, format!("gitdir: {INSIDE_GIT}\n"))
            .map_err(io("write", &self.pointer))?;
        fs::rename(&building, &self.dir).map_err(io("make", &self.dir))
    }

    fn config(&self) -> Result<String, WorkspaceError> {
        let format = self.paths.run(&["rev-parse", "--show-object-format"])?;
        let mut config = expected_config(format.trim() == "sha256");
        // The person's remotes, so a push inside names the same remote; the
        // host decides a push's credential from the person's own config,
        // whatever a command later writes here.
        let remotes = self
            .paths
            .run(&[
                "config",
                "--get-regexp",
                r"^remote\.[^.]+\.(url|pushurl|fetch)$",
            ])
            .unwrap_or_default();
        for line in remotes.lines() {
            let Some((key, value)) = line.split_once(' ') else {
                continue;
            };
            let Some((name, field)) = key
                .strip_prefix("remote.")
                .and_then(|rest| rest.rsplit_once('.'))
            else {
                continue;
            };
            if name.contains(['"', '\\', '\n']) || value.contains('\n') {
                continue;
            }
            let value = value.replace('\\', "\\\\").replace('"', "\\\"");
            config.push_str(&format!("[remote \"{name}\"]\n\t{field} = \"{value}\"\n"));
        }
        Ok(config)
    }

    /// The person's branches, tags and remote branches as packed refs, so a
    /// command can read them; other sessions' branches are left out.
    fn snapshot(&self) -> Result<String, WorkspaceError> {
        let refs = self.paths.run(&[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads",
            "refs/tags",
            "refs/remotes",
        ])?;
        let mut out = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        for line in refs.lines() {
            if !line.contains(" refs/heads/chock/") {
                out.push_str(line);
                out.push('\n');
            }
        }
        Ok(out)
    }

    /// What a command inside sees: the private directory, the person's
    /// objects read-only, and the pointer over the worktree's `.git` (only
    /// where the sandbox's workspace, `workspace` on the host and `inside`
    /// in the sandbox, is the worktree itself).
    pub fn binds(&self, workspace: &Path, inside: &Path) -> Vec<Bind> {
        let mut binds = vec![
            Bind {
                src: self.dir.clone(),
                dst: INSIDE_GIT.into(),
                writable: true,
            },
            Bind {
                src: self.paths.common.join("objects"),
                dst: INSIDE_OBJECTS.into(),
                writable: false,
            },
        ];
        if same_dir(workspace, &self.paths.work_tree) {
            binds.push(Bind {
                src: self.pointer.clone(),
                dst: inside.join(".git"),
                writable: false,
            });
        }
        binds
    }

    /// After the session (or, for one no process holds, before a person
    /// looks at its workspace): commits what it left uncommitted in its
    /// workspace on its branch, the message naming the session, so that
    /// `chock workspace diff` shows every change and apply carries it. Only
    /// once every commit of the private directory is on the branch; the
    /// private directory is then removed, and the next command of a carried
    /// on session starts from the branch as it now is. The new tip, or
    /// `None` when nothing was left.
    pub fn commit_leftovers(&self, session: &str) -> Result<Option<String>, WorkspaceError> {
        let real = self.real_tip()?;
        // A session none of whose commands ran, or one settled before, has
        // no private directory: nothing there to wait for.
        let private = match fs::symlink_metadata(&self.dir) {
            Ok(_) => self.private_tip()?,
            Err(_) => None,
        };
        if let Some(private) = private
            && private != real
        {
            return Err(WorkspaceError::Refused(format!(
                "the session's uncommitted files stay uncommitted: its sandbox's git directory holds commits not on {} ({}); look at them with `chock workspace show {session}`",
                self.branch,
                private.get(..7).unwrap_or(&private)
            )));
        }
        self.paths.ensure_view(&self.branch)?;
        if super::changed_files_in(&self.paths)?.is_empty() {
            return Ok(None);
        }
        self.paths.run(&["add", "--all", "--", "."])?;
        let mut commit = super::identity_args(&self.paths.common);
        let message = format!("chock: what session {session} left uncommitted");
        commit
            .extend(["commit", "--quiet", "--no-verify", "--message", &message].map(str::to_owned));
        let commit: Vec<&str> = commit.iter().map(String::as_str).collect();
        self.paths.run(&commit)?;
        if fs::symlink_metadata(&self.dir).is_ok() {
            fs::remove_dir_all(&self.dir).map_err(|error| WorkspaceError::Io {
                what: "remove",
                path: self.dir.clone(),
                error,
            })?;
        }
        self.real_tip().map(Some)
    }

    /// The session branch's tip in the person's repository.
    pub fn real_tip(&self) -> Result<String, WorkspaceError> {
        let text = self.paths.run(&[
            "rev-parse",
            "--verify",
            &format!("{}^{{commit}}", self.branch_ref()),
        ])?;
        Ok(text.trim().to_owned())
    }

    /// The tip a command left on the session branch in the private
    /// directory, if it is an object id; the ref is read without following
    /// a link, and a packed one is looked up in `packed-refs`.
    pub fn private_tip(&self) -> Result<Option<String>, WorkspaceError> {
        let name = self.branch_ref();
        if let Some(text) = read_private(&self.dir, &name, 4096)? {
            return object_id(text.trim()).map(Some);
        }
        let Some(packed) = read_private(&self.dir, "packed-refs", 64 << 20)? else {
            return Ok(None);
        };
        for line in packed.lines() {
            if let Some((id, refname)) = line.split_once(' ')
                && refname == name
            {
                return object_id(id).map(Some);
            }
        }
        Ok(None)
    }

    /// Brings the session branch's commits back from the private directory
    /// when its tip moved past `known` (the tip last seen); returns the tip
    /// now on the person's side. `imported` holds the loose objects already
    /// carried over by this process, so each is copied once.
    pub fn import(
        &self,
        known: &str,
        imported: &mut BTreeSet<String>,
    ) -> Result<Option<String>, WorkspaceError> {
        let Some(tip) = self.private_tip()? else {
            return Err(WorkspaceError::Refused(format!(
                "the session branch {} is gone from the sandbox's git directory",
                self.branch
            )));
        };
        if tip == known {
            return Ok(None);
        }
        let present = self
            .paths
            .succeeds(&["cat-file", "-e", &format!("{tip}^{{commit}}")]);
        // The person's branch is ahead of the sandbox's (they committed in
        // the workspace themselves): nothing to bring back, nothing moves.
        if present
            && self
                .paths
                .succeeds(&["merge-base", "--is-ancestor", &tip, known])
        {
            return Ok(None);
        }
        if !present {
            self.carry_objects(&tip, known, imported)?;
        }
        if !self
            .paths
            .succeeds(&["merge-base", "--is-ancestor", known, &tip])
        {
            return Err(WorkspaceError::Refused(format!(
                "the sandbox's branch {} points at {tip}, which is not a fast-forward of the session branch (at {known}); its commits stay in the sandbox's git directory",
                self.branch
            )));
        }
        if !self.paths.succeeds(&[
            "rev-list",
            "--objects",
            "--quiet",
            &tip,
            &format!("^{known}"),
        ]) {
            return Err(WorkspaceError::Refused(format!(
                "commit {tip} on the sandbox's branch {} reaches objects that are missing or malformed",
                self.branch
            )));
        }
        self.paths
            .run(&["update-ref", &self.branch_ref(), &tip, known])?;
        // The host's own view reads its index from the branch before each
        // status (`GitPaths::ensure_view`). The person's, for git run by
        // hand in the workspace, is the worktree's index in their
        // repository: written here through the host's view (git writes it
        // by renaming a new file over it).
        if let Some(own) = self.worktree_record() {
            let _ = self
                .paths
                .command(["read-tree", &tip])
                .env("GIT_INDEX_FILE", own.join("index"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        Ok(Some(tip))
    }

    /// Copies the private loose objects and packs into the scratch
    /// directory and has git index them into the person's store.
    fn carry_objects(
        &self,
        tip: &str,
        known: &str,
        imported: &mut BTreeSet<String>,
    ) -> Result<(), WorkspaceError> {
        let _ = fs::remove_dir_all(&self.scratch);
        let objects = self.scratch.join("objects");
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(objects.join("pack"))
            .map_err(|source| WorkspaceError::Io {
                what: "create",
                path: objects.clone(),
                error: source,
            })?;
        let copied = copy_objects(&self.dir.join("objects"), &objects, imported);
        let result = copied.and_then(|fresh| {
            self.index_packs(&objects.join("pack"));
            let packed = self.repack(&objects, tip, known);
            if packed.is_ok() {
                imported.extend(fresh);
            }
            packed
        });
        let _ = fs::remove_dir_all(&self.scratch);
        result
    }

    /// Makes each copied pack's index from the pack's content (a pack is
    /// read as an alternate only with one); a pack git cannot index is
    /// dropped, and the import then finds what it lacked missing.
    fn index_packs(&self, packs: &Path) {
        let Ok(entries) = fs::read_dir(packs) else {
            return;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.extension().is_some_and(|e| e == "pack") {
                let pack = path.to_string_lossy();
                if !self.paths.succeeds(&["index-pack", &pack]) {
                    let _ = fs::remove_file(&path);
                }
            }
        }
    }

    /// `pack-objects` reading the copies as an alternate, piped into the
    /// person's repository, which names each object by its content and
    /// checks every one: `unpack-objects --strict` for a pack of fewer than
    /// [`UNPACK_LIMIT`] objects (each commit a command makes, as git's own
    /// `transfer.unpackLimit` does for a push), `index-pack --strict` for a
    /// larger one. A pack kept for every small import would be one more
    /// for every later git command in the repository to open: after a
    /// hundred commits each git command took about a millisecond longer.
    fn repack(&self, objects: &Path, tip: &str, known: &str) -> Result<(), WorkspaceError> {
        let refused = |what: &str, detail: String| {
            WorkspaceError::Refused(format!(
                "the sandbox's commit {tip} could not be brought back ({what}): {detail}"
            ))
        };
        let mut pack = self
            .paths
            .command(["pack-objects", "--revs", "--stdout", "--quiet"])
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|err| refused("pack-objects", err.to_string()))?;
        if let Some(mut stdin) = pack.stdin.take() {
            let _ = write!(stdin, "{tip}\n^{known}\n^{}\n", self.start);
        }
        let Some(mut stdout) = pack.stdout.take() else {
            return Err(refused("pack-objects", "no output".to_owned()));
        };
        // The pack's header: `PACK`, its version, and how many objects.
        let mut header = [0u8; 12];
        let headed = std::io::Read::read_exact(&mut stdout, &mut header);
        let count = u32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        let store = if headed.is_ok() && &header[..4] == b"PACK" && count < UNPACK_LIMIT {
            ["unpack-objects", "--strict", "-q"]
        } else {
            ["index-pack", "--stdin", "--strict"]
        };
        let stored = headed.map_err(|err| err.to_string()).and_then(|()| {
            let mut child = self
                .paths
                .command(store)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|err| err.to_string())?;
            // The header put back in front of the rest of the pack, on a
            // thread, so what the child says on stderr is read meanwhile.
            let stdin = child.stdin.take();
            std::thread::scope(|scope| {
                scope.spawn(move || {
                    if let Some(mut stdin) = stdin {
                        let _ = stdin
                            .write_all(&header)
                            .and_then(|()| std::io::copy(&mut stdout, &mut stdin));
                    }
                });
                child.wait_with_output().map_err(|err| err.to_string())
            })
        });
        let packed = pack
            .wait_with_output()
            .map_err(|err| refused("pack-objects", err.to_string()))?;
        if !packed.status.success() {
            return Err(refused(
                "pack-objects",
                String::from_utf8_lossy(&packed.stderr).trim().to_owned(),
            ));
        }
        let stored = stored.map_err(|err| refused(store[0], err))?;
        if !stored.status.success() {
            return Err(refused(
                store[0],
                String::from_utf8_lossy(&stored.stderr).trim().to_owned(),
            ));
        }
        Ok(())
    }

    /// Sentences about what a command changed in the private directory
    /// that the host ignores: its HEAD, config, alternates, hooks, and
    /// pointers git would follow in a linked worktree.
    pub fn inspect(&self) -> Vec<String> {
        let mut found = Vec::new();
        let head = format!("ref: {}", self.branch_ref());
        match read_private(&self.dir, "HEAD", 4096) {
            Ok(Some(text)) if text.trim() == head => {}
            _ => found.push(format!(
                "its HEAD no longer names {}; the host reads only that branch, never HEAD",
                self.branch
            )),
        }
        let alternates = format!("{INSIDE_OBJECTS}\n");
        if !matches!(read_private(&self.dir, "objects/info/alternates", 4096), Ok(Some(t)) if t == alternates)
        {
            found.push(
                "its objects/info/alternates was changed; the host never follows it".to_owned(),
            );
        }
        let written = fs::read_to_string(&self.written_config).ok();
        let config = read_private(&self.dir, "config", 1 << 20).ok().flatten();
        if written.is_some() && config != written {
            found.push("its config was changed; no git of the host reads it".to_owned());
        }
        for name in ["commondir", "gitdir", "hooks"] {
            if fs::symlink_metadata(self.dir.join(name)).is_ok() {
                found.push(format!("it holds {name}, which the host never reads"));
            }
        }
        found
    }

    /// The worktree's own directory in the person's repository, when its
    /// `gitdir` names this checkout.
    fn worktree_record(&self) -> Option<PathBuf> {
        let name = self.paths.work_tree.file_name()?;
        let own = self.paths.common.join("worktrees").join(name);
        let pointer = fs::read_to_string(own.join("gitdir")).ok()?;
        let points = Path::new(pointer.trim_end());
        let ours = self.paths.work_tree.join(".git");
        (points == ours || points.canonicalize().ok() == ours.canonicalize().ok()).then_some(own)
    }
}

/// A session's private git directory with what this process has brought
/// back from it: the tip last seen on the person's side, the loose objects
/// already carried, and what was already said about the directory.
#[derive(Debug)]
pub struct BringBack {
    git: SandboxGit,
    known: RefCell<Option<String>>,
    imported: RefCell<BTreeSet<String>>,
    said: RefCell<BTreeSet<String>>,
}

impl BringBack {
    pub fn new(git: SandboxGit) -> BringBack {
        BringBack {
            git,
            known: RefCell::new(None),
            imported: RefCell::new(BTreeSet::new()),
            said: RefCell::new(BTreeSet::new()),
        }
    }

    pub fn git(&self) -> &SandboxGit {
        &self.git
    }

    /// Brings back the commits commands made since the last time, and says,
    /// once each, what the host ignored in the directory: the tip now on
    /// the person's side when it moved, and the sentences for a notice. A
    /// session none of whose commands has run yet has nothing to bring.
    pub fn run(&self) -> (Option<String>, Vec<String>) {
        let git = &self.git;
        let mut said = Vec::new();
        if !git.dir.is_dir() {
            return (None, said);
        }
        let known = match self.known.borrow().clone() {
            Some(known) => Ok(known),
            None => git.real_tip(),
        };
        let moved = known.and_then(|known| {
            let moved = git.import(&known, &mut self.imported.borrow_mut())?;
            *self.known.borrow_mut() = Some(moved.clone().unwrap_or(known));
            Ok(moved)
        });
        let moved = moved.unwrap_or_else(|err| {
            said.push(format!(
                "the commits of the sandbox's git were not brought back: {err}; branch {} stays where it was",
                git.branch
            ));
            None
        });
        for finding in git.inspect() {
            if self.said.borrow_mut().insert(finding.clone()) {
                said.push(format!("the sandbox's git directory changed: {finding}"));
            }
        }
        (moved, said)
    }
}

/// Below this many objects an import is stored loose, as git's own
/// `transfer.unpackLimit` (100) stores a small push.
const UNPACK_LIMIT: u32 = 100;

/// The private directory's config as the host writes it, before the
/// person's remotes.
fn expected_config(sha256: bool) -> String {
    if sha256 {
        format!(
            "{}[extensions]\n\tobjectformat = sha256\n",
            CONFIG.replace("= 0\n\tfilemode", "= 1\n\tfilemode")
        )
    } else {
        CONFIG.to_owned()
    }
}

fn parent_of(branch: &str) -> &str {
    branch.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// `text` if it is a full object id (40 or 64 lower-case hex digits).
fn object_id(text: &str) -> Result<String, WorkspaceError> {
    let hex = text
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex && (text.len() == 40 || text.len() == 64) {
        Ok(text.to_owned())
    } else {
        Err(WorkspaceError::Refused(format!(
            "the sandbox's session branch holds {:?}, which is not an object id",
            text.chars().take(80).collect::<String>()
        )))
    }
}
