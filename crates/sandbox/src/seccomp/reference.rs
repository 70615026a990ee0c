//! The filter as it was built before: with seccompiler, one program per
//! errno chained into one. Kept for the tests only, as the reference the
//! compact program must answer exactly like.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op,
    SeccompCondition as Cond, SeccompFilter, SeccompRule, TargetArch,
};

use super::{DENIED, Insn};
use crate::SpecError;

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
pub(crate) fn build(jit: bool, inet: bool) -> Result<Vec<Insn>, SpecError> {
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
    Ok(chain(programs)
        .into_iter()
        .map(|i| Insn {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect())
}
