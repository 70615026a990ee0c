//! The seccomp filter, compiled once per process and mode with seccompiler
//! and installed in the child with one raw `seccomp(2)` call.
//!
//! seccompiler gives one match action per filter, and the refusals want
//! different errnos (EPERM for forbidden calls, ENOSYS for clone3 so libcs
//! fall back to clone, EAFNOSUPPORT for socket families, EACCES for W^X), so
//! there is one small program per errno, chained into one: every "allow" of
//! a program but the last becomes a jump to the start of the next. The
//! programs never refuse the same call, so the chain answers as the four
//! filters would, with one filter to attach per spawn and to run per system
//! call. Every refusal is an errno: nothing here kills. (seccompiler's own architecture check does kill a process that
//! makes 32-bit `int 0x80` calls; that is reported as SIGSYS by name.)

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};

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

const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    0x80, // CLONE_NEWTIME
];

/// `personality(2)` flag that turns every readable mapping executable.
const READ_IMPLIES_EXEC: u64 = 0x0040_0000;

/// The compiled filter.
#[derive(Debug, Clone)]
pub(crate) struct Filters {
    pub(crate) program: BpfProgram,
}

const BPF_RET_K: u16 = 0x06;
const BPF_JMP_JA: u16 = 0x05;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;

/// Chains programs: each "allow" but the last program's jumps to the next.
fn chain(programs: Vec<BpfProgram>) -> BpfProgram {
    let last = programs.len().saturating_sub(1);
    let mut out = Vec::with_capacity(programs.iter().map(Vec::len).sum());
    for (i, prog) in programs.into_iter().enumerate() {
        let len = prog.len();
        for (j, mut ins) in prog.into_iter().enumerate() {
            if i != last && ins.code == BPF_RET_K && ins.k == SECCOMP_RET_ALLOW {
                ins.code = BPF_JMP_JA;
                ins.jt = 0;
                ins.jf = 0;
                ins.k = u32::try_from(len - j - 1).unwrap_or(0);
            }
            out.push(ins);
        }
    }
    out
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, SpecError> {
    Cond::new(arg, len, op, value).map_err(|e| SpecError::Seccomp(e.to_string()))
}

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, SpecError> {
    SeccompRule::new(conds).map_err(|e| SpecError::Seccomp(e.to_string()))
}

fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, SpecError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno.unsigned_abs()),
        TargetArch::x86_64,
    )
    .map_err(|e| SpecError::Seccomp(e.to_string()))?;
    BpfProgram::try_from(filter).map_err(|e| SpecError::Seccomp(e.to_string()))
}

/// Builds the filters. `inet` false also refuses AF_INET and AF_INET6 (the
/// degraded mode has no network namespace to keep the network out).
pub(crate) fn build(jit: bool, inet: bool) -> Result<Filters, SpecError> {
    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|(nr, _)| (*nr, Vec::new())).collect();
    // The ioctl request is an `unsigned int` to the kernel: compare only the
    // low 32 bits, or `TIOCSTI | 1 << 32` would slip past.
    eperm.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, Len::Dword, Op::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    let mut clone_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        clone_rules.push(rule(vec![cond(
            0,
            Len::Qword,
            Op::MaskedEq(*flag),
            *flag,
        )?])?);
    }
    eperm.insert(libc::SYS_clone, clone_rules);
    // personality(0xffffffff) only queries; refuse setting READ_IMPLIES_EXEC.
    eperm.insert(
        libc::SYS_personality,
        vec![rule(vec![
            cond(
                0,
                Len::Dword,
                Op::MaskedEq(READ_IMPLIES_EXEC),
                READ_IMPLIES_EXEC,
            )?,
            cond(0, Len::Dword, Op::Ne, 0xffff_ffff)?,
        ])?],
    );

    let mut programs = vec![compile(eperm, libc::EPERM)?];
    programs.push(compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )?);

    let mut families = vec![cond(0, Len::Dword, Op::Ne, libc::AF_UNIX as u64)?];
    if inet {
        families.push(cond(0, Len::Dword, Op::Ne, libc::AF_INET as u64)?);
        families.push(cond(0, Len::Dword, Op::Ne, libc::AF_INET6 as u64)?);
    }
    programs.push(compile(
        BTreeMap::from([(libc::SYS_socket, vec![rule(families)?])]),
        libc::EAFNOSUPPORT,
    )?);

    if !jit {
        let wx = (libc::PROT_WRITE | libc::PROT_EXEC) as u64;
        let wx_rule = |arg| -> Result<Vec<SeccompRule>, SpecError> {
            Ok(vec![rule(vec![cond(
                arg,
                Len::Dword,
                Op::MaskedEq(wx),
                wx,
            )?])?])
        };
        programs.push(compile(
            BTreeMap::from([
                (libc::SYS_mmap, wx_rule(2)?),
                (libc::SYS_mprotect, wx_rule(2)?),
                (libc::SYS_pkey_mprotect, wx_rule(2)?),
            ]),
            libc::EACCES,
        )?);
    }
    Ok(Filters {
        program: chain(programs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jit_drops_exactly_the_wx_rules() {
        let strict = build(false, true).unwrap().program;
        let jit = build(true, true).unwrap().program;
        assert!(strict.len() > jit.len());
        assert!(strict.len() < 4096, "the kernel's limit on one filter");
    }

    #[test]
    fn only_the_last_program_allows() {
        let a = compile(
            BTreeMap::from([(libc::SYS_ptrace, Vec::new())]),
            libc::EPERM,
        )
        .unwrap();
        let b = compile(
            BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
            libc::ENOSYS,
        )
        .unwrap();
        let (la, lb) = (a.len(), b.len());
        let allowed_in_a: Vec<usize> = a
            .iter()
            .enumerate()
            .filter(|(_, i)| i.code == BPF_RET_K && i.k == SECCOMP_RET_ALLOW)
            .map(|(n, _)| n)
            .collect();
        assert!(!allowed_in_a.is_empty());
        let c = chain(vec![a, b]);
        assert_eq!(c.len(), la + lb);
        // Every former "allow" of the first program now jumps exactly to
        // the second program's first instruction.
        for n in allowed_in_a {
            assert_eq!(c[n].code, BPF_JMP_JA);
            assert_eq!(n + 1 + c[n].k as usize, la);
        }
        assert!(
            c[..la]
                .iter()
                .all(|i| !(i.code == BPF_RET_K && i.k == SECCOMP_RET_ALLOW))
        );
    }
}
