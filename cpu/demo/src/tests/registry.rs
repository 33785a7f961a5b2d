//! The binary's list of patterns (`engine::registry`): names, variants, kernels, sanitizer cases.

use crate::PATTERNS;
use crate::engine::cli::{self, Builtin, Invocation};
use crate::tests::patterns;

#[test]
fn names_are_unique_and_no_pattern_shadows_a_command() {
    let command = cli::command(patterns());
    for (i, p) in PATTERNS.iter().enumerate() {
        assert!(
            PATTERNS[..i].iter().all(|q| q.name != p.name),
            "{} twice",
            p.name
        );
        assert!(
            !<Builtin as clap::Subcommand>::has_subcommand(p.name),
            "{} is a command's name",
            p.name
        );
        assert!(!p.summary().is_empty(), "{} has no help line", p.name);
        let sub = command.find_subcommand(p.name);
        assert!(sub.is_some(), "{} has no subcommand", p.name);
    }
}

#[test]
fn every_pattern_has_variants_kernels_and_sanitizer_cases() {
    for p in PATTERNS {
        assert!(!(p.variants)().is_empty(), "{} has no variants", p.name);
        assert!(!p.kernels().is_empty(), "{} launches no kernel", p.name);
        assert!(
            !(p.sanitize)().is_empty(),
            "{} has no sanitizer case",
            p.name
        );
    }
}

/// Every pattern parses at its defaults (what `demo all` runs) and with each of its
/// sanitizer cases, as that pattern, into its own arguments, which pass its check.
#[test]
fn defaults_and_sanitizer_cases_parse() {
    for p in PATTERNS {
        let cases = std::iter::once(String::new()).chain((p.sanitize)());
        for args in cases {
            let argv = ["demo", p.name].into_iter().chain(args.split_whitespace());
            let matches = cli::command(patterns())
                .try_get_matches_from(argv)
                .unwrap_or_else(|e| panic!("demo {} {args}: {e}", p.name));
            match cli::parse(patterns(), &matches) {
                Ok((_, Invocation::Pattern(q, sub))) => {
                    assert_eq!(q.name, p.name, "demo {} {args}", p.name);
                    if let Err(e) = q.check(&sub) {
                        panic!("demo {} {args}: {e}", p.name);
                    }
                }
                Ok((_, Invocation::Builtin(_))) => panic!("demo {} is a command", p.name),
                Err(e) => panic!("demo {} {args}: {e}", p.name),
            }
        }
    }
}

#[test]
fn the_memory_topics_name_every_kernel_of_cpu_memory() {
    let known = patterns().kernel_names();
    for k in cpu::lab::memory::kernel_names() {
        assert!(known.contains(&k), "{k} is in no pattern's variants");
    }
}
