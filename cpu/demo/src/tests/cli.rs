//! The command line with the binary's patterns (`engine::cli`).

use crate::engine::cli::{Builtin, Invocation, command, parse};
use crate::engine::options::{Format, Options};
use crate::tests::patterns;

fn parse_argv(argv: &[&str]) -> Result<(Options, Invocation), clap::Error> {
    parse(patterns(), &command(patterns()).try_get_matches_from(argv)?)
}

fn sweep_args(argv: &[&str]) -> (Options, Vec<String>, Option<u64>) {
    let (opts, invocation) = parse_argv(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    let (patterns, max_elements) = match invocation {
        Invocation::Builtin(Builtin::Sweep {
            patterns,
            max_elements,
            ..
        }) => (patterns, max_elements),
        _ => panic!("{argv:?} is not a sweep"),
    };
    (opts, patterns, max_elements)
}

#[test]
fn sweep_parses_patterns_and_options() {
    let (_, patterns, max) = sweep_args(&["demo", "sweep"]);
    assert!(patterns.is_empty(), "none given: all");
    assert_eq!(max, None);
    let (opts, patterns, max) = sweep_args(&[
        "demo",
        "sweep",
        "conv1d",
        "reduce-f32",
        "--max-elements",
        "1048576",
        "--reps",
        "7",
        "--peers",
        "p.json",
        "--out",
        "dir",
    ]);
    assert_eq!(patterns, ["conv1d", "reduce-f32"]);
    assert_eq!(max, Some(1 << 20));
    assert_eq!(opts.reps, 7);
    assert_eq!(opts.peers.as_deref(), Some(std::path::Path::new("p.json")));
    assert_eq!(opts.out.as_deref(), Some(std::path::Path::new("dir")));
    // Global options before the subcommand too.
    let (opts, patterns, _) = sweep_args(&["demo", "--format", "csv", "sweep", "transpose"]);
    assert_eq!(patterns, ["transpose"]);
    assert_eq!(opts.format, Format::Csv);
}

#[test]
fn sweep_refuses_bad_options_in_the_parser() {
    for argv in [
        &["demo", "sweep", "--max-elements", "many"][..],
        &["demo", "sweep", "--max-elements", "-1"],
        &["demo", "sweep", "--size", "10"],
        &["demo", "sweep", "--list-cases", "--max-elements", "10"],
    ] {
        assert!(parse_argv(argv).is_err(), "{argv:?} parsed");
    }
    // Unknown pattern names parse, and the sweep refuses them in one sentence before any
    // GPU work (`sweep::parse_patterns`).
    let (_, names, _) = sweep_args(&["demo", "sweep", "no-such"]);
    assert!(patterns().parse_sweeps(&names).is_err());
}

#[test]
fn a_pattern_parses_with_the_global_options_on_either_side() {
    for argv in [
        &["demo", "--reps", "3", "reduce", "--size", "1000"][..],
        &["demo", "reduce", "--size", "1000", "--reps", "3"],
        // The alias names the canonical pattern.
        &["demo", "reduction", "--reps", "3", "--size", "1000"],
    ] {
        let (opts, invocation) = parse_argv(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
        assert_eq!(opts.reps, 3, "{argv:?}");
        match invocation {
            Invocation::Pattern(p, matches) => {
                assert_eq!(p.name, "reduce");
                assert_eq!(matches.get_one::<usize>("size"), Some(&1000));
            }
            Invocation::Builtin(_) => panic!("{argv:?} is not a pattern"),
        }
    }
    for argv in [
        &["demo"][..],
        &["demo", "no-such-pattern"],
        &["demo", "vector-add", "--rows", "3"],
        &["demo", "--reps", "0", "vector-add"],
    ] {
        assert!(parse_argv(argv).is_err(), "{argv:?} parsed");
    }
}
