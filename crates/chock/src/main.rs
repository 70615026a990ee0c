//! `chock`: the small front. Runs `chock sandbox` (without `--net`) and
//! `chock gate` itself and hands every other command line to `chock-full`;
//! see the library's documentation.

fn main() -> std::process::ExitCode {
    chock_cli::front_main()
}
