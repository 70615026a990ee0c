//! What the skills, the guidance at the start and the secrets cost: the
//! start's gathering (40 skills in a project, AGENTS.md and the memory)
//! against reading the same files and nothing more, the floor any
//! implementation pays; and redacting a command's 1 MiB output with three
//! secrets given against the same output with none.

#![expect(clippy::unwrap_used, reason = "a benchmark that fails should stop")]

use chock_runner::context::{Sources, StartContext};
use chock_runner::secrets::Redactor;
use chock_runner::tools::{SkillDirs, Skills, ToolOutput};
use criterion::{Criterion, criterion_group, criterion_main};

const SKILLS: usize = 40;

fn bench(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let skills = project.join(".chock/skills");
    let mut files = Vec::new();
    for i in 0..SKILLS {
        let dir = skills.join(format!("skill-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("SKILL.md");
        std::fs::write(
            &file,
            format!(
                "---\nname: skill-{i}\ndescription: what skill {i} is for, in one line\n---\n{}",
                "body text\n".repeat(200)
            ),
        )
        .unwrap();
        files.push(file);
    }
    let agents = project.join("AGENTS.md");
    std::fs::write(&agents, "guidance line\n".repeat(400)).unwrap();
    files.push(agents);
    let memory = root.path().join("memory.md");
    std::fs::write(&memory, "a note\n".repeat(100)).unwrap();
    files.push(memory.clone());
    let policy = chock_policy::Policy::shipped();
    let dirs = SkillDirs {
        operator: Some(root.path().join("no-operator-skills")),
        project: Some(skills.clone()),
        packaged: Vec::new(),
        profiles: Vec::new(),
    };

    let mut group = c.benchmark_group("start");
    group.bench_function("gather", |b| {
        b.iter(|| {
            StartContext::gather(Sources {
                base: "prompt",
                project: &project,
                operator_guidance: None,
                memory: memory.clone(),
                policy: &policy,
                skills: Skills::load(&dirs),
            })
        });
    });
    group.bench_function("read the same files", |b| {
        b.iter(|| {
            files
                .iter()
                .map(|f| std::fs::read(f).unwrap().len())
                .sum::<usize>()
        });
    });
    group.finish();

    let text = "cargo test output line, nothing secret here\n".repeat(1024 * 1024 / 45);
    let none = Redactor::default();
    let three = Redactor::default();
    three.remember("A", "value-of-secret-a-1234");
    three.remember("B", "value-of-secret-b-5678");
    three.remember("C", "value-of-secret-c-9012");
    let mut group = c.benchmark_group("redact 1 MiB");
    group.bench_function("no secret given", |b| {
        b.iter(|| {
            let mut out = ToolOutput::ok(text.clone());
            none.redact_output(&mut out);
            out
        });
    });
    group.bench_function("three secrets given", |b| {
        b.iter(|| {
            let mut out = ToolOutput::ok(text.clone());
            three.redact_output(&mut out);
            out
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
