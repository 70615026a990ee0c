//! `chock-full`: every `chock` subcommand. People run it through the
//! `chock` front, which hands it the command line unchanged; see the
//! library's documentation.

fn main() -> std::process::ExitCode {
    chock_cli::full_main()
}
