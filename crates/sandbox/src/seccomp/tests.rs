//! The compact filter against the seccompiler-built reference, both run by
//! a classic-BPF interpreter over every call number and the argument values
//! the rules look at.

use super::*;

const JMP_JA: u16 = 0x05;
const JMP_JGT_K: u16 = 0x25;

/// `struct seccomp_data` for one call.
struct Data {
    nr: u32,
    arch: u32,
    args: [u64; 6],
}

impl Data {
    fn word(&self, off: u32) -> u32 {
        match off {
            0 => self.nr,
            4 => self.arch,
            o if (16..64).contains(&o) => {
                let arg = self.args[((o - 16) / 8) as usize];
                if o % 8 == 0 {
                    arg as u32
                } else {
                    (arg >> 32) as u32
                }
            }
            o => panic!("load from offset {o}"),
        }
    }
}

/// Runs a program the way the kernel does, for the opcodes both use.
fn run(prog: &[Insn], d: &Data) -> u32 {
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let i = prog[pc];
        pc += 1;
        let cond = match i.code {
            LD_W_ABS => {
                acc = d.word(i.k);
                continue;
            }
            ALU_AND_K => {
                acc &= i.k;
                continue;
            }
            RET_K => return i.k,
            JMP_JA => {
                pc += i.k as usize;
                continue;
            }
            JMP_JEQ_K => acc == i.k,
            JMP_JGT_K => acc > i.k,
            JMP_JGE_K => acc >= i.k,
            JMP_JSET_K => acc & i.k != 0,
            c => panic!("opcode {c:#x} at {}", pc - 1),
        };
        pc += usize::from(if cond { i.jt } else { i.jf });
    }
}

/// Values that sit on either side of every rule's comparison.
fn interesting() -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        u64::MAX,
        0xffff_ffff,
        1 << 32,
        libc::AF_UNIX as u64,
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_NETLINK as u64,
        libc::AF_PACKET as u64,
        libc::AF_VSOCK as u64,
        (1 << 32) | libc::AF_NETLINK as u64,
        libc::TIOCSTI,
        libc::TIOCSTI | (1 << 32),
        libc::TIOCLINUX,
        libc::TIOCLINUX | (7 << 40),
        libc::TIOCGWINSZ,
        READ_IMPLIES_EXEC as u64,
        READ_IMPLIES_EXEC as u64 | 0x8,
        (READ_IMPLIES_EXEC as u64) << 32,
        0xffff_ffff | (1 << 40),
        (libc::SIGCHLD | libc::CLONE_VM | libc::CLONE_THREAD) as u64,
    ];
    for bit in 0..64 {
        v.push(1 << bit);
    }
    for prot in 0..8 {
        v.push(prot);
        v.push(prot | (1 << 33));
    }
    v
}

/// Every call number below the x32 range, where the two programs are meant
/// to differ (the reference lets x32 calls through; see the test below).
fn calls() -> impl Iterator<Item = u32> {
    (0..600).chain([1023, X32_SYSCALL_BIT - 1])
}

#[test]
fn compact_program_answers_like_the_reference() {
    let values = interesting();
    for (jit, inet) in [(false, true), (true, true), (false, false), (true, false)] {
        let new = build(jit, inet).unwrap().program;
        let old = reference::build(jit, inet).unwrap();
        assert!(new.len() * 3 < old.len(), "{} vs {}", new.len(), old.len());
        for nr in calls() {
            for arch in [AUDIT_ARCH_X86_64, 0x4000_0003 /* i386 */] {
                for arg in 0..3 {
                    for v in &values {
                        let mut args = [0; 6];
                        args[arg] = *v;
                        let d = Data { nr, arch, args };
                        assert_eq!(
                            run(&new, &d),
                            run(&old, &d),
                            "jit {jit} inet {inet} nr {nr} arch {arch:#x} arg{arg} = {v:#x}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_rules_refuse_what_they_name() {
    let p = build(false, true).unwrap().program;
    let call = |nr: i64, a: [u64; 3]| {
        run(
            &p,
            &Data {
                nr: nr as u32,
                arch: AUDIT_ARCH_X86_64,
                args: [a[0], a[1], a[2], 0, 0, 0],
            },
        )
    };
    let eperm = RET_ERRNO | libc::EPERM as u32;
    assert_eq!(call(libc::SYS_ptrace, [0; 3]), eperm);
    assert_eq!(call(libc::SYS_io_uring_setup, [0; 3]), eperm);
    assert_eq!(
        call(libc::SYS_ioctl, [0, libc::TIOCSTI | (1 << 32), 0]),
        eperm
    );
    assert_eq!(call(libc::SYS_ioctl, [0, libc::TIOCGWINSZ, 0]), RET_ALLOW);
    let newuser = libc::CLONE_NEWUSER as u64;
    assert_eq!(call(libc::SYS_clone, [newuser, 0, 0]), eperm);
    assert_eq!(
        call(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0]),
        RET_ALLOW
    );
    assert_eq!(
        call(libc::SYS_clone3, [0; 3]),
        RET_ERRNO | libc::ENOSYS as u32
    );
    assert_eq!(
        call(libc::SYS_socket, [libc::AF_NETLINK as u64, 0, 0]),
        RET_ERRNO | libc::EAFNOSUPPORT as u32
    );
    assert_eq!(
        call(libc::SYS_socket, [libc::AF_INET6 as u64, 0, 0]),
        RET_ALLOW
    );
    let rwx = (libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC) as u64;
    assert_eq!(
        call(libc::SYS_mmap, [0, 4096, rwx]),
        RET_ERRNO | libc::EACCES as u32
    );
    assert_eq!(call(libc::SYS_personality, [0xffff_ffff, 0, 0]), RET_ALLOW);
    assert_eq!(
        call(libc::SYS_personality, [READ_IMPLIES_EXEC as u64, 0, 0]),
        eperm
    );
    assert_eq!(call(libc::SYS_getpid, [0; 3]), RET_ALLOW);
}

#[test]
fn x32_calls_answer_enosys_and_foreign_arches_are_killed() {
    let p = build(false, true).unwrap().program;
    let x32_ptrace = X32_SYSCALL_BIT | 521;
    let d = Data {
        nr: x32_ptrace,
        arch: AUDIT_ARCH_X86_64,
        args: [0; 6],
    };
    assert_eq!(run(&p, &d), RET_ERRNO | libc::ENOSYS as u32);
    let d = Data {
        nr: 1,
        arch: 0x4000_0003,
        args: [0; 6],
    };
    assert_eq!(run(&p, &d), RET_KILL_PROCESS);
}

#[test]
fn jit_drops_exactly_the_wx_rules() {
    let strict = build(false, true).unwrap().program;
    let jit = build(true, true).unwrap().program;
    // Three calls fewer to search, and no block for them.
    assert!(
        jit.len() + 6 <= strict.len(),
        "{} vs {}",
        jit.len(),
        strict.len()
    );
    assert!(strict.len() < 90, "{} instructions", strict.len());
    let mmap = |p: &[Insn]| {
        run(
            p,
            &Data {
                nr: libc::SYS_mmap as u32,
                arch: AUDIT_ARCH_X86_64,
                args: [
                    0,
                    4096,
                    (libc::PROT_WRITE | libc::PROT_EXEC) as u64,
                    0,
                    0,
                    0,
                ],
            },
        )
    };
    assert_eq!(mmap(&strict), RET_ERRNO | libc::EACCES as u32);
    assert_eq!(mmap(&jit), RET_ALLOW);
}

/// How many instructions run before the program returns or first loads an
/// argument: the part the kernel emulates for every call number when it
/// fills its action cache, with interrupts off.
fn dispatch_steps(prog: &[Insn], nr: u32) -> usize {
    let d = Data {
        nr,
        arch: AUDIT_ARCH_X86_64,
        args: [0; 6],
    };
    let (mut pc, mut acc, mut steps) = (0usize, 0u32, 0);
    loop {
        let i = prog[pc];
        pc += 1;
        steps += 1;
        let cond = match i.code {
            LD_W_ABS if i.k >= ARGS => return steps,
            LD_W_ABS => {
                acc = d.word(i.k);
                continue;
            }
            RET_K => return steps,
            JMP_JEQ_K => acc == i.k,
            JMP_JGE_K => acc >= i.k,
            c => panic!("opcode {c:#x} before any argument is loaded"),
        };
        pc += usize::from(if cond { i.jt } else { i.jf });
    }
}

/// The call number is found by a search, not a row of compares: no number
/// takes more than a dozen steps (a row of every listed call took 50).
#[test]
fn every_call_number_is_decided_in_a_few_steps() {
    for jit in [false, true] {
        let p = build(jit, true).unwrap().program;
        let worst = calls().map(|nr| dispatch_steps(&p, nr)).max().unwrap();
        assert!(worst <= 14, "jit {jit}: {worst} steps");
    }
}
