//! `demo`: see the [`demo`] library for the commands.

fn main() -> std::process::ExitCode {
    demo::main()
}
