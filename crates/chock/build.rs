//! Links GCC's unwinder into the programs statically instead of loading
//! `libgcc_s.so.1`.
//!
//! Rust's standard library asks the linker for `-lgcc_s` on linux-gnu. That
//! shared library's constructor probes the processor with `cpuid` when it
//! is loaded, which a virtual machine answers slowly: about 0.13 ms of every
//! `chock sandbox` on the development VM (docs/performance.md, "Sandbox").
//! The same unwinder exists as a static archive, `libgcc_eh.a`, without the
//! probe. A linker script named `libgcc_s.so` in a directory searched before
//! the compiler's own makes `-lgcc_s` mean `-lgcc_eh`: panics unwind as
//! before, and the programs need only libc (and libm) at run time.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if !(gnu && linux) {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    if std::fs::write(out.join("libgcc_s.so"), "INPUT(-lgcc_eh)\n").is_ok() {
        println!("cargo:rustc-link-search=native={}", out.display());
    }
}
