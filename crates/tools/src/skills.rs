//! Skills: directories of written instructions, each with a SKILL.md, found
//! in three layers (docs/skills.md). The session is told each offered
//! skill's name, description and layer at its start; the body costs no
//! context until `read_skill` reads it, decided at `skill.read.<layer>`.
//!
//! The layers, in the order a name is looked up (the first wins):
//! - `operator`: config.zon's `.skills_dir`, else
//!   `$XDG_CONFIG_HOME/chock/skills`;
//! - `project`: [`PROJECT_DIR`] in the project directory, as the person's
//!   checkout holds it (the place chock.zon is read from, which the
//!   session's commands cannot write);
//! - `packaged`: each directory of `$CHOCK_SKILLS_PATH` (the NixOS and
//!   home-manager modules' `services.chock.skills`), then
//!   `<profile>/share/chock/skills` of each `<profile>/bin` on `PATH`.
//!
//! The front matter is read by hand: it is two keys of one line each, and
//! a YAML parser would accept far more than the format means (docs/skills.md).

use std::path::{Component, Path, PathBuf};

use chock_policy::SkillLayer;

/// Where a project keeps its skills, relative to its root.
pub const PROJECT_DIR: &str = ".chock/skills";
/// The variable naming packaged skill directories, `:`-separated.
pub const SKILLS_PATH_ENV: &str = "CHOCK_SKILLS_PATH";
/// The file that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// Most characters of a description the model is told.
pub const MAX_DESCRIPTION: usize = 512;
/// Most bytes read_skill hands back from one file.
pub(crate) const MAX_READ: usize = 256 * 1024;

/// One skill found in a layer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skill {
    /// One label: letters, digits, `-` and `_`.
    pub name: String,
    pub description: String,
    #[serde(serialize_with = "layer_name")]
    pub layer: SkillLayer,
    /// The skill's directory.
    pub dir: PathBuf,
}

fn layer_name<S: serde::Serializer>(layer: &SkillLayer, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(layer.as_str())
}

/// Every skill of a session: those offered, those a skill of the same name
/// in an earlier layer hides, and a sentence for each that was skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    pub offered: Vec<Skill>,
    pub shadowed: Vec<Skill>,
    /// Why a skill or a directory was not read, one sentence each.
    pub skipped: Vec<String>,
}

/// The directories of each layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillDirs {
    pub operator: Option<PathBuf>,
    pub project: Option<PathBuf>,
    /// Named by `$CHOCK_SKILLS_PATH`.
    pub packaged: Vec<PathBuf>,
    /// `share/chock/skills` of each profile on `PATH`: guessed, so one that
    /// cannot be reached (under another user's home) is not said.
    pub profiles: Vec<PathBuf>,
}

/// What one kind of layered file is called in each layer: skills and agent
/// profiles are found in the same three layers by the same rules.
#[derive(Debug, Clone, Copy)]
pub struct LayerNames {
    /// The directory's name under the operator's config and under a
    /// profile's `share/chock`.
    pub dir: &'static str,
    /// Where a project keeps them, relative to its root.
    pub project: &'static str,
    /// The variable naming packaged directories, `:`-separated.
    pub env: &'static str,
}

/// Where skills live.
pub const SKILL_LAYERS: LayerNames = LayerNames {
    dir: "skills",
    project: PROJECT_DIR,
    env: SKILLS_PATH_ENV,
};

impl SkillDirs {
    /// The layers' directories from the environment: `skills_dir` is
    /// config.zon's `.skills_dir`, `project` the project's root.
    pub fn discover(skills_dir: Option<&Path>, project: &Path) -> SkillDirs {
        SkillDirs::discover_named(SKILL_LAYERS, skills_dir, project)
    }

    /// [`SkillDirs::discover`] for any kind of layered file: `configured`
    /// replaces the operator's directory when config.zon names one.
    pub fn discover_named(
        names: LayerNames,
        configured: Option<&Path>,
        project: &Path,
    ) -> SkillDirs {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let operator = configured.map(Path::to_path_buf).or_else(|| {
            env("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
                .map(|c| c.join("chock").join(names.dir))
        });
        let mut packaged: Vec<PathBuf> = Vec::new();
        for dir in env(names.env)
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
        {
            if dir.is_absolute() && !packaged.contains(&dir) {
                packaged.push(dir);
            }
        }
        let mut profiles: Vec<PathBuf> = Vec::new();
        let guessed = env("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|bin| bin.file_name().is_some_and(|n| n == "bin"))
            .filter_map(|bin| bin.parent().map(|p| p.join("share/chock").join(names.dir)));
        for dir in guessed {
            if dir.is_absolute() && !packaged.contains(&dir) && !profiles.contains(&dir) {
                profiles.push(dir);
            }
        }
        SkillDirs {
            operator,
            project: Some(project.join(names.project)),
            packaged,
            profiles,
        }
    }

    /// Every (layer, directory, guessed), in lookup order.
    pub(crate) fn each(&self) -> Vec<(SkillLayer, &Path, bool)> {
        let mut out = Vec::new();
        out.extend(
            self.operator
                .as_deref()
                .map(|d| (SkillLayer::Operator, d, false)),
        );
        out.extend(
            self.project
                .as_deref()
                .map(|d| (SkillLayer::Project, d, false)),
        );
        out.extend(
            self.packaged
                .iter()
                .map(|d| (SkillLayer::Packaged, d.as_path(), false)),
        );
        out.extend(
            self.profiles
                .iter()
                .map(|d| (SkillLayer::Packaged, d.as_path(), true)),
        );
        out
    }
}

impl Skills {
    /// Reads every layer. A directory that does not exist holds nothing; one
    /// that cannot be read, and a skill whose SKILL.md is not well formed,
    /// are skipped with a sentence saying why.
    pub fn load(dirs: &SkillDirs) -> Skills {
        let mut skills = Skills::default();
        // Two packaged directories can be one directory by another path.
        let mut seen: Vec<PathBuf> = Vec::new();
        for (layer, dir, guessed) in dirs.each() {
            let real = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
            if seen.contains(&real) {
                continue;
            }
            seen.push(real);
            // A guessed directory that cannot even be looked at (under
            // another user's home) is no skills directory of this person's.
            if guessed && std::fs::metadata(dir).is_err() {
                continue;
            }
            skills.read_layer(layer, dir);
        }
        skills
    }

    fn read_layer(&mut self, layer: SkillLayer, dir: &Path) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return,
            Err(err) => {
                self.skipped.push(format!(
                    "the {} skills directory {} cannot be read ({err}), so none of its skills are offered: fix its permissions or remove it",
                    layer.as_str(),
                    dir.display()
                ));
                return;
            }
        };
        // The project layer's own directory, made canonical once: each of
        // its files must resolve inside it.
        let top = (layer == SkillLayer::Project).then(|| dir.canonicalize().ok());
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(SKILL_FILE).is_file())
            .collect();
        dirs.sort();
        for skill_dir in dirs {
            match read_skill_file(layer, &skill_dir, top.as_ref().map(Option::as_deref)) {
                Ok(skill) => {
                    if self.offered.iter().any(|s| s.name == skill.name) {
                        self.shadowed.push(skill);
                    } else {
                        self.offered.push(skill);
                    }
                }
                Err(why) => self.skipped.push(format!(
                    "the {} skill at {} is skipped: {why}",
                    layer.as_str(),
                    skill_dir.join(SKILL_FILE).display()
                )),
            }
        }
    }

    /// The offered skill named `name`.
    pub fn find(&self, name: &str) -> Option<&Skill> {
        self.offered.iter().find(|s| s.name == name)
    }

    /// What the model is told at the start: each offered skill's name,
    /// layer and description, and nothing of its body. Empty when there
    /// are none.
    pub fn instructions(&self) -> String {
        if self.offered.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "Skills are written instructions for particular tasks. Read one with read_skill when the task matches its description (a skill is text: it permits nothing).\n",
        );
        for s in &self.offered {
            out.push_str(&format!(
                "- {} ({}): {}\n",
                s.name,
                s.layer.as_str(),
                s.description
            ));
        }
        out
    }
}

/// Reads `dir/SKILL.md`'s front matter into a [`Skill`], or says what is
/// wrong with it.
fn read_skill_file(
    layer: SkillLayer,
    dir: &Path,
    top: Option<Option<&Path>>,
) -> Result<Skill, String> {
    let text = read_below(top, dir, Path::new(SKILL_FILE))?;
    let (name, description, _body) = parse(&text)?;
    Ok(Skill {
        name,
        description,
        layer,
        dir: dir.to_owned(),
    })
}

/// A SKILL.md's name, description and body.
pub(crate) fn parse(text: &str) -> Result<(String, String, &str), String> {
    let (front, body) = front_matter(text)?;
    let (name, description) = name_and_description(&front)?;
    Ok((name, description, body))
}

/// A front matter's keys and values, in their order.
pub(crate) type Front = Vec<(String, String)>;

/// The keys of a front matter, one line each (`key: value`, a value
/// optionally quoted), and the body after it.
pub(crate) fn front_matter(text: &str) -> Result<(Front, &str), String> {
    const NO_FRONT: &str = "it has no front matter: begin it with a line '---', then 'name: <one label>' and 'description: <one line>', then '---'";
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or(NO_FRONT)?;
    let (front, body) = match rest.find("\n---") {
        Some(end) => {
            let after = &rest[end + 4..];
            let body = after.split_once('\n').map_or("", |(_, b)| b);
            (&rest[..end], body)
        }
        None => return Err(NO_FRONT.to_owned()),
    };
    let mut keys = Vec::new();
    for line in front.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        keys.push((key.trim().to_owned(), value.to_owned()));
    }
    Ok((keys, body))
}

/// A front matter's `name` (one label) and `description` (one line, cut to
/// [`MAX_DESCRIPTION`]), or what is wrong with them.
pub(crate) fn name_and_description(front: &[(String, String)]) -> Result<(String, String), String> {
    let get = |want: &str| {
        front
            .iter()
            .rev()
            .find(|(key, _)| key == want)
            .map(|(_, value)| value.clone())
    };
    let name = get("name");
    let description = get("description");
    let name = name.ok_or("its front matter has no 'name:'")?;
    if !chock_policy::is_label(&name) || name.len() > 64 {
        return Err(format!(
            "its name '{name}' is not one label (letters, digits, '-' and '_', at most 64): rename it"
        ));
    }
    let description = description
        .filter(|d| !d.is_empty())
        .ok_or("its front matter has no 'description:': say in one line when the skill applies")?;
    let description: String = description.chars().take(MAX_DESCRIPTION).collect();
    Ok((name, description))
}

/// Reads `rel` inside a skill's directory. `rel` holds plain names only (no
/// `..`, not absolute); a project skill's file must also resolve, through
/// any symlink, inside the project's skills directory, since the repository
/// chose where its links point.
pub(crate) fn read_in(layer: SkillLayer, dir: &Path, rel: &Path) -> Result<String, String> {
    let top =
        (layer == SkillLayer::Project).then(|| dir.parent().and_then(|p| p.canonicalize().ok()));
    read_below(top.as_ref().map(Option::as_deref), dir, rel)
}

/// [`read_in`] with the project layer's directory made canonical already
/// (`Some(top)`), or `None` for a layer whose links may point anywhere.
pub(crate) fn read_below(
    top: Option<Option<&Path>>,
    dir: &Path,
    rel: &Path,
) -> Result<String, String> {
    if rel.as_os_str().is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!(
            "'{}' is not a path inside the skill: give a relative path without '..', such as 'examples/one.md'",
            rel.display()
        ));
    }
    let path = dir.join(rel);
    if let Some(top) = top {
        let real = path.canonicalize().map_err(|err| format!("{err}"))?;
        if !top.is_some_and(|top| real.starts_with(top)) {
            return Err(format!(
                "'{}' leads out of the project's skills directory through a symlink; it is not read",
                rel.display()
            ));
        }
    }
    let bytes = std::fs::read(&path).map_err(|err| format!("cannot read it ({err})"))?;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_READ)]).into_owned();
    if bytes.len() > MAX_READ {
        text.push_str(&format!(
            "\n[cut: {MAX_READ} of {} bytes shown]",
            bytes.len()
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_name_description_and_body() {
        let (name, description, body) = parse(
            "---\nname: deploy\ndescription: \"How we ship\"\nallowed-tools: all\n---\nStep one.\n",
        )
        .unwrap();
        assert_eq!(
            (name.as_str(), description.as_str(), body),
            ("deploy", "How we ship", "Step one.\n")
        );
    }

    #[test]
    fn a_missing_front_matter_or_a_name_that_is_not_one_label_is_refused() {
        assert!(parse("# Deploy\n").unwrap_err().contains("no front matter"));
        assert!(
            parse("---\nname: a.b\ndescription: x\n---\n")
                .unwrap_err()
                .contains("not one label")
        );
        assert!(
            parse("---\nname: ok\n---\n")
                .unwrap_err()
                .contains("description")
        );
    }

    #[test]
    fn a_path_leaving_the_skill_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for rel in ["../x", "/etc/passwd", ""] {
            let err = read_in(SkillLayer::Operator, dir.path(), Path::new(rel)).unwrap_err();
            assert!(err.contains("not a path inside the skill"), "{err}");
        }
    }

    #[test]
    fn the_first_layer_wins_and_the_other_is_kept_as_shadowed() {
        let root = tempfile::tempdir().unwrap();
        let write = |layer: &str, name: &str| {
            let d = root.path().join(layer).join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join(SKILL_FILE),
                format!("---\nname: {name}\ndescription: {layer}\n---\nbody\n"),
            )
            .unwrap();
        };
        write("op", "same");
        write("pr/.chock/skills", "same");
        write("pr/.chock/skills", "other");
        let dirs = SkillDirs {
            operator: Some(root.path().join("op")),
            project: Some(root.path().join("pr/.chock/skills")),
            packaged: vec![root.path().join("missing")],
            profiles: Vec::new(),
        };
        let skills = Skills::load(&dirs);
        assert_eq!(skills.offered.len(), 2);
        assert_eq!(skills.find("same").unwrap().layer, SkillLayer::Operator);
        assert_eq!(skills.shadowed[0].layer, SkillLayer::Project);
        assert!(skills.skipped.is_empty(), "{:?}", skills.skipped);
    }
}
