//! The seccomp filter: a compact classic-BPF program written directly, one
//! per process and mode, installed in the child with one raw `seccomp(2)`.
//!
//! The kernel checks, converts and JIT-compiles the filter on every spawn,
//! and emulates it once per system call number to fill its action cache, so
//! its length is paid on every command. A general compiler (seccompiler, as
//! used before) spends five instructions on each refused call and repeats
//! the architecture check per errno; this one loads the call number once,
//! finds it among the calls the filter looks at by a binary search (a
//! `jge` per level, then at most four `jeq`, each jumping straight to a
//! shared `return` of the right errno), and sends the few calls whose
//! arguments matter to small blocks after the search: about 80
//! instructions instead of 321. The search, rather than one `jeq` per call
//! in a row, is for the action cache: the kernel emulates the filter for
//! each of the ~460 call numbers with interrupts off while it installs it,
//! and a row of 45 compares made that about 0.1 ms of every spawn. The
//! unit tests run both programs through a BPF interpreter and check that
//! they answer the same for every call number and the arguments that
//! matter. Every refusal is an errno: nothing here kills, except the
//! architecture check (a 32-bit `int 0x80` call), reported as SIGSYS.

use crate::SpecError;

/// Calls refused with EPERM whatever their arguments.
const DENIED: &[(i64, &str)] = &[
    (libc::SYS_ptrace, "ptrace"),
    (libc::SYS_process_vm_readv, "process_vm_readv"),
    (libc::SYS_process_vm_writev, "process_vm_writev"),
    (libc::SYS_mount, "mount"),
    (libc::SYS_umount2, "umount2"),
    (libc::SYS_pivot_root, "pivot_root"),
    (libc::SYS_chroot, "chroot"),
    (libc::SYS_move_mount, "move_mount"),
    (libc::SYS_open_tree, "open_tree"),
    (libc::SYS_fsopen, "fsopen"),
    (libc::SYS_fsconfig, "fsconfig"),
    (libc::SYS_fsmount, "fsmount"),
    (libc::SYS_fspick, "fspick"),
    (libc::SYS_mount_setattr, "mount_setattr"),
    (libc::SYS_unshare, "unshare"),
    (libc::SYS_setns, "setns"),
    (libc::SYS_keyctl, "keyctl"),
    (libc::SYS_add_key, "add_key"),
    (libc::SYS_request_key, "request_key"),
    (libc::SYS_bpf, "bpf"),
    (libc::SYS_perf_event_open, "perf_event_open"),
    (libc::SYS_userfaultfd, "userfaultfd"),
    (libc::SYS_init_module, "init_module"),
    (libc::SYS_finit_module, "finit_module"),
    (libc::SYS_delete_module, "delete_module"),
    (libc::SYS_kexec_load, "kexec_load"),
    (libc::SYS_kexec_file_load, "kexec_file_load"),
    (libc::SYS_open_by_handle_at, "open_by_handle_at"),
    (libc::SYS_io_uring_setup, "io_uring_setup"),
    (libc::SYS_io_uring_enter, "io_uring_enter"),
    (libc::SYS_io_uring_register, "io_uring_register"),
    (libc::SYS_iopl, "iopl"),
    (libc::SYS_ioperm, "ioperm"),
];

/// The names of every call the filter refuses outright, for docs and reports.
pub fn denied_names() -> impl Iterator<Item = &'static str> {
    DENIED.iter().map(|(_, n)| *n)
}

/// Every `CLONE_NEW*` flag (each one bit, all in the low 32): `clone` with
/// any of them is a nested namespace.
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32
    | 0x80; // CLONE_NEWTIME

/// `personality(2)` flag that turns every readable mapping executable.
const READ_IMPLIES_EXEC: u32 = 0x0040_0000;

/// x32 system calls are x86-64 calls with this bit set in the number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;

/// One classic-BPF instruction, laid out as the kernel's `sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Insn {
    pub(crate) code: u16,
    pub(crate) jt: u8,
    pub(crate) jf: u8,
    pub(crate) k: u32,
}

/// The compiled filter.
#[derive(Debug, Clone)]
pub(crate) struct Filters {
    pub(crate) program: Vec<Insn>,
}

pub(crate) const LD_W_ABS: u16 = 0x20;
pub(crate) const ALU_AND_K: u16 = 0x54;
pub(crate) const JMP_JEQ_K: u16 = 0x15;
pub(crate) const JMP_JGE_K: u16 = 0x35;
pub(crate) const JMP_JSET_K: u16 = 0x45;
pub(crate) const RET_K: u16 = 0x06;

pub(crate) const RET_ALLOW: u32 = 0x7fff_0000;
pub(crate) const RET_ERRNO: u32 = 0x0005_0000;
pub(crate) const RET_KILL_PROCESS: u32 = 0x8000_0000;

/// Offsets in `struct seccomp_data`: the low 32 bits of argument `n` are
/// at `ARGS + 8 * n` (little-endian), which is all the kernel reads for
/// the `int`-sized arguments checked here.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARGS: u32 = 16;

/// Where a jump goes: the next instruction or a labelled block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    L(Label),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Allow,
    Errno(i32),
    Ioctl,
    Clone,
    Socket,
    Personality,
    Wx,
    /// A node of the call-number search.
    Node(u16),
}

/// A tiny assembler: forward jumps to labels, resolved once all is placed.
#[derive(Default)]
struct Asm {
    code: Vec<(Insn, To, To)>,
    labels: Vec<(Label, usize)>,
}

impl Asm {
    fn stmt(&mut self, code: u16, k: u32) {
        self.code.push((
            Insn {
                code,
                jt: 0,
                jf: 0,
                k,
            },
            To::Next,
            To::Next,
        ));
    }
    fn jump(&mut self, code: u16, k: u32, jt: To, jf: To) {
        self.code.push((
            Insn {
                code,
                jt: 0,
                jf: 0,
                k,
            },
            jt,
            jf,
        ));
    }
    fn label(&mut self, l: Label) {
        self.labels.push((l, self.code.len()));
    }

    /// Sends the call number in the accumulator to the target of its entry
    /// in `calls` (sorted by number, not empty), or to `Allow` when it has
    /// none: a binary search on `jge`, with runs of at most [`LEAF`] `jeq`
    /// at the leaves.
    fn search(&mut self, calls: &[(u32, To)], nodes: &mut u16) {
        /// Where a run of compares costs no more than another level.
        const LEAF: usize = 4;
        if calls.len() <= LEAF {
            for (i, &(nr, to)) in calls.iter().enumerate() {
                let miss = if i + 1 == calls.len() {
                    To::L(Label::Allow)
                } else {
                    To::Next
                };
                self.jump(JMP_JEQ_K, nr, to, miss);
            }
            return;
        }
        let mid = calls.len() / 2;
        let upper = Label::Node(*nodes);
        *nodes += 1;
        self.jump(JMP_JGE_K, calls[mid].0, To::L(upper), To::Next);
        self.search(&calls[..mid], nodes);
        self.label(upper);
        self.search(&calls[mid..], nodes);
    }
    fn finish(self) -> Result<Vec<Insn>, SpecError> {
        let at = |i: usize, to: To| -> Result<u8, SpecError> {
            let To::L(l) = to else { return Ok(0) };
            let target = self
                .labels
                .iter()
                .find(|(m, _)| *m == l)
                .map(|(_, p)| *p)
                .ok_or_else(|| SpecError::Seccomp(format!("no block for {l:?}")))?;
            target
                .checked_sub(i + 1)
                .and_then(|d| u8::try_from(d).ok())
                .ok_or_else(|| SpecError::Seccomp(format!("jump to {l:?} out of range")))
        };
        let mut out = Vec::with_capacity(self.code.len());
        for (i, (mut ins, jt, jf)) in self.code.iter().copied().enumerate() {
            ins.jt = at(i, jt)?;
            ins.jf = at(i, jf)?;
            out.push(ins);
        }
        if out.len() > 4096 {
            return Err(SpecError::Seccomp("filter longer than 4096".to_owned()));
        }
        Ok(out)
    }
}

fn nr(n: i64) -> Result<u32, SpecError> {
    u32::try_from(n).map_err(|_| SpecError::Seccomp(format!("system call number {n}")))
}

/// Builds the filter. `inet` false also refuses AF_INET and AF_INET6 (the
/// degraded mode has no network namespace to keep the network out).
pub(crate) fn build(jit: bool, inet: bool) -> Result<Filters, SpecError> {
    use Label as L;
    let errno = |e: i32| To::L(L::Errno(e));
    let mut a = Asm::default();
    a.stmt(LD_W_ABS, ARCH);
    a.jump(JMP_JEQ_K, AUDIT_ARCH_X86_64, To::Next, To::L(L::Errno(-1)));
    a.stmt(LD_W_ABS, NR);
    // An x32 call reaches the same kernel code under another number;
    // answer as a kernel without x32 does.
    a.jump(JMP_JGE_K, X32_SYSCALL_BIT, errno(libc::ENOSYS), To::Next);
    let mut calls = vec![
        (nr(libc::SYS_ioctl)?, To::L(L::Ioctl)),
        (nr(libc::SYS_clone)?, To::L(L::Clone)),
        // ENOSYS, so libcs fall back to clone, whose flags the filter can see.
        (nr(libc::SYS_clone3)?, errno(libc::ENOSYS)),
        (nr(libc::SYS_socket)?, To::L(L::Socket)),
        (nr(libc::SYS_personality)?, To::L(L::Personality)),
    ];
    if !jit {
        for call in [libc::SYS_mmap, libc::SYS_mprotect, libc::SYS_pkey_mprotect] {
            calls.push((nr(call)?, To::L(L::Wx)));
        }
    }
    for (call, _) in DENIED {
        calls.push((nr(*call)?, errno(libc::EPERM)));
    }
    calls.sort_by_key(|&(nr, _)| nr);
    if calls.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(SpecError::Seccomp("a call is listed twice".to_owned()));
    }
    a.search(&calls, &mut 0);

    // The ioctl request is an `unsigned int` to the kernel: compare only the
    // low 32 bits, or `TIOCSTI | 1 << 32` would slip past.
    a.label(L::Ioctl);
    a.stmt(LD_W_ABS, ARGS + 8);
    a.jump(
        JMP_JEQ_K,
        libc::TIOCSTI as u32,
        errno(libc::EPERM),
        To::Next,
    );
    a.jump(
        JMP_JEQ_K,
        libc::TIOCLINUX as u32,
        errno(libc::EPERM),
        To::L(L::Allow),
    );

    a.label(L::Clone);
    a.stmt(LD_W_ABS, ARGS);
    a.jump(
        JMP_JSET_K,
        NAMESPACE_FLAGS,
        errno(libc::EPERM),
        To::L(L::Allow),
    );

    a.label(L::Socket);
    a.stmt(LD_W_ABS, ARGS);
    a.jump(JMP_JEQ_K, libc::AF_UNIX as u32, To::L(L::Allow), To::Next);
    if inet {
        a.jump(JMP_JEQ_K, libc::AF_INET as u32, To::L(L::Allow), To::Next);
        a.jump(JMP_JEQ_K, libc::AF_INET6 as u32, To::L(L::Allow), To::Next);
    }
    a.stmt(RET_K, RET_ERRNO | libc::EAFNOSUPPORT as u32);

    // personality(0xffffffff) only queries; refuse setting READ_IMPLIES_EXEC.
    a.label(L::Personality);
    a.stmt(LD_W_ABS, ARGS);
    a.jump(JMP_JEQ_K, 0xffff_ffff, To::L(L::Allow), To::Next);
    a.jump(
        JMP_JSET_K,
        READ_IMPLIES_EXEC,
        errno(libc::EPERM),
        To::L(L::Allow),
    );

    let wx = (libc::PROT_WRITE | libc::PROT_EXEC) as u32;
    if !jit {
        a.label(L::Wx);
        a.stmt(LD_W_ABS, ARGS + 16);
        a.stmt(ALU_AND_K, wx);
        a.jump(JMP_JEQ_K, wx, errno(libc::EACCES), To::L(L::Allow));
    }

    a.label(L::Allow);
    a.stmt(RET_K, RET_ALLOW);
    for e in [libc::EPERM, libc::ENOSYS, libc::EACCES] {
        a.label(L::Errno(e));
        a.stmt(RET_K, RET_ERRNO | e.unsigned_abs());
    }
    // The architecture check's target: not an errno but a kill, since a
    // foreign architecture's numbers mean other calls.
    a.label(L::Errno(-1));
    a.stmt(RET_K, RET_KILL_PROCESS);
    a.finish().map(|program| Filters { program })
}

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
