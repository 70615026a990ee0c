//! What finding a session's devices costs at each command's start: the
//! sysfs look of `SessionDevices` on a machine of twelve USB devices (six
//! of them serial adapters with a tty each), one of them allowed, against
//! preparing the command's sandbox (`Sandbox::new` of the spec a session's
//! command gets), which a change of devices costs again.

#![expect(clippy::unwrap_used, reason = "a benchmark that fails should stop")]

use chock_policy::{FileKind, Layers, Policy, check_file};
use chock_runner::devices::{self, sysfs::Roots};
use chock_runner::tools::CommandDevices;
use chock_sandbox::{Sandbox, SandboxSpec};
use chock_testkit::{FakeDevices, UsbDevice};
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let machine = FakeDevices::new();
    let ports: Vec<String> = (1..=12).map(|i| format!("1-{i}")).collect();
    let ttys: Vec<String> = (0..12).map(|i| format!("ttyUSB{i}")).collect();
    for (i, port) in ports.iter().enumerate() {
        machine.plug(&UsbDevice {
            port,
            ids: ("0403", if i == 0 { "6001" } else { "6010" }),
            serial: None,
            tty: (i % 2 == 0).then_some(ttys[i].as_str()),
            like: "/dev/null",
        });
    }
    let text = ".{ .devices = .{ .{ .action = \"device.tty.0403.6001\" } }, .policy = .{ .rules = .{ .{ .action = \"device.tty.0403.6001\", .decision = .allow } } } }";
    let policy = Policy::new(Layers {
        project: Some(check_file(text, None, FileKind::Project).rules),
        ..Layers::default()
    });
    let roots = Roots {
        sys: machine.sys(),
        dev: machine.dev(),
    };
    let decided = devices::decide(&policy, roots);
    assert_eq!(decided.devices.nodes().0.len(), 1);
    let workspace = tempfile::tempdir().unwrap();

    let mut group = c.benchmark_group("devices");
    group.bench_function("look", |b| b.iter(|| decided.devices.nodes()));
    group.bench_function("sandbox_prepare", |b| {
        b.iter(|| Sandbox::new(SandboxSpec::new(workspace.path())).unwrap());
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
