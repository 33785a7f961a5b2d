//! What a pattern is to the demo: the [`Pattern`] trait (one implementation per pattern, on
//! the pattern's own clap arguments), and [`PatternInfo`], the same definition behind a
//! pointer, and [`Patterns`], the list the binary gives the engine (the crate root's
//! `PATTERNS`, the one place that names every pattern). That list is the only one: the
//! subcommands (`cli::command`), their dispatch, `demo list`,
//! `demo all` (its order), `demo sweep` (each pattern's [`Pattern::SWEEPS`]), the bundle's
//! `run.sh` (`demo list --names` and `demo list --sanitize-args`, read by `cargo xtask
//! bundle`) and `peers.py` (`demo sweep --list-cases`) all derive from it.
//!
//! Adding a pattern: see `docs/adding_a_pattern.md`.

use anyhow::Result;
use clap::{ArgMatches, FromArgMatches, ValueEnum};
use comfy_table::Table;
use comfy_table::presets::ASCII_MARKDOWN;
use cpu::Gpu;

use crate::engine::harness::{Footprint, require_memory};
use crate::engine::options::Options;
use crate::engine::out::Out;
use crate::engine::sweep::SweepSpec;

/// One variant of a pattern, as `demo list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariantInfo {
    /// The variant's name (the library's `Variant` name, kebab-case, where it has one).
    pub name: String,
    /// The `.entry` names it launches: several for a family with one entry per block size or
    /// mask width; none for a copy the driver does.
    pub kernels: Vec<&'static str>,
}

/// A pattern of the demo, implemented on its arguments: the type is the pattern's clap
/// [`Args`](clap::Args) (its doc comment is the subcommand's help, its fields the options,
/// with their defaults), and the trait says everything else every tool needs of it.
pub(crate) trait Pattern: clap::Args + FromArgMatches + 'static {
    /// The subcommand (`demo <name>`), the report section and the `run.sh` name.
    const NAME: &'static str;
    /// Other names the subcommand answers to (not shown in the help).
    const ALIASES: &'static [&'static str] = &[];
    /// The sweeps over the pattern's library entry points (`demo sweep`, and the cases
    /// `peers.py --sweep` times); none by default.
    const SWEEPS: &'static [SweepSpec] = &[];

    /// Its variants and their kernels, in the order the demo runs them.
    fn variants() -> Vec<VariantInfo>;

    /// The arguments (after the name) compute-sanitizer runs it with: small sizes that still
    /// cover partial blocks and tiles. Several cases where the kernel launched depends on an
    /// argument (the vec4 convolutions' mask widths).
    fn sanitize() -> Vec<String>;

    /// Why `demo all` cannot run the pattern on this machine (a run-time library it needs is
    /// absent), or `None`. Asked for by name, the pattern still runs and fails with the
    /// library's error.
    fn unavailable() -> Option<String> {
        None
    }

    /// Checks what clap's value parsers cannot, before any device work (before the device is
    /// opened): combinations of arguments, and the files they name. An argument error is an
    /// [`ArgError`](crate::engine::args::ArgError) (exit status 2, as clap's); a file that cannot be
    /// read any other error (exit status 1). Nothing by default.
    ///
    /// # Errors
    /// As above.
    fn check(&self) -> Result<()> {
        Ok(())
    }

    /// The peak device and host memory of a run with these arguments, checked
    /// ([`require_memory`]) before [`Pattern::run`], so that a size that does not fit is
    /// refused in one sentence before any GPU work. `None` where the pattern runs on several
    /// devices and checks each itself.
    ///
    /// # Errors
    /// A size whose bytes overflow, or an input whose dimensions cannot be read.
    fn footprint(&self, gpu: &Gpu) -> Result<Option<Footprint>>;

    /// Runs every variant with these arguments on `gpu`, adding its tables to `out`.
    ///
    /// # Errors
    /// A library or driver error, or a variant that disagrees with the CPU reference.
    fn run(&self, gpu: &Gpu, opts: &Options, out: &mut Out) -> Result<()>;
}

/// A [`Pattern`] behind function pointers: what [`Patterns`] holds and every
/// tool that iterates the patterns reads.
pub struct PatternInfo {
    /// The subcommand (`demo <name>`), the report section and the `run.sh` name.
    pub name: &'static str,
    /// Its variants and their kernels, in the order the demo runs them.
    pub variants: fn() -> Vec<VariantInfo>,
    /// The compute-sanitizer cases ([`Pattern::sanitize`]).
    pub sanitize: fn() -> Vec<String>,
    aliases: &'static [&'static str],
    sweeps: &'static [SweepSpec],
    args: fn(clap::Command) -> clap::Command,
    unavailable: fn() -> Option<String>,
    check: fn(&ArgMatches) -> Result<()>,
    run: fn(&Gpu, &Options, &mut Out, &ArgMatches) -> Result<()>,
}

impl PatternInfo {
    /// The entry of pattern `P`.
    pub(crate) const fn of<P: Pattern>() -> Self {
        Self {
            name: P::NAME,
            variants: P::variants,
            sanitize: P::sanitize,
            aliases: P::ALIASES,
            sweeps: P::SWEEPS,
            args: P::augment_args,
            unavailable: P::unavailable,
            check: check::<P>,
            run: run::<P>,
        }
    }

    /// Its subcommand: the name, the aliases, and the arguments' help and options.
    pub(crate) fn command(&self) -> clap::Command {
        (self.args)(clap::Command::new(self.name)).aliases(self.aliases)
    }

    /// What the pattern runs: its subcommand's help line.
    pub fn summary(&self) -> String {
        self.command()
            .get_about()
            .map(|a| a.to_string())
            .unwrap_or_default()
    }

    /// Why `demo all` cannot run it here ([`Pattern::unavailable`]).
    pub fn unavailable(&self) -> Option<String> {
        (self.unavailable)()
    }

    /// Its sweeps ([`Pattern::SWEEPS`]).
    pub(crate) fn sweeps(&self) -> &'static [SweepSpec] {
        self.sweeps
    }

    /// Checks `matches`, the matches of its subcommand, before any device work
    /// ([`Pattern::check`]).
    ///
    /// # Errors
    /// As [`Pattern::check`].
    pub(crate) fn check(&self, matches: &ArgMatches) -> Result<()> {
        (self.check)(matches)
    }

    /// Runs it with `matches`, the matches of its subcommand: the arguments parsed, the
    /// footprint checked, then [`Pattern::run`].
    ///
    /// # Errors
    /// As [`Pattern::footprint`] and [`Pattern::run`].
    pub(crate) fn run(
        &self,
        gpu: &Gpu,
        opts: &Options,
        out: &mut Out,
        matches: &ArgMatches,
    ) -> Result<()> {
        (self.run)(gpu, opts, out, matches)
    }

    /// Every `.entry` its variants launch, each once.
    pub fn kernels(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for v in (self.variants)() {
            for k in v.kernels {
                if !names.contains(&k) {
                    names.push(k);
                }
            }
        }
        names
    }
}

impl std::fmt::Debug for PatternInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternInfo")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn check<P: Pattern>(matches: &ArgMatches) -> Result<()> {
    P::from_arg_matches(matches)?.check()
}

fn run<P: Pattern>(gpu: &Gpu, opts: &Options, out: &mut Out, matches: &ArgMatches) -> Result<()> {
    let args = P::from_arg_matches(matches)?;
    if let Some(footprint) = args.footprint(gpu)? {
        require_memory(gpu, &footprint)?;
    }
    args.run(gpu, opts, out)
}

/// The patterns a `demo` binary offers, in the order `demo all`, `demo list` and `run.sh demo`
/// run them (the crate root's `PATTERNS`): what the engine iterates, so that it names none.
#[derive(Clone, Copy, Debug)]
pub struct Patterns(&'static [PatternInfo]);

impl Patterns {
    /// The list `patterns`, in order.
    pub const fn new(patterns: &'static [PatternInfo]) -> Self {
        Self(patterns)
    }

    /// Every pattern, in order.
    pub fn iter(self) -> std::slice::Iter<'static, PatternInfo> {
        self.0.iter()
    }

    /// The pattern named `name`.
    pub fn find(self, name: &str) -> Option<&'static PatternInfo> {
        self.0.iter().find(|p| p.name == name)
    }

    /// Every `.entry` any pattern launches, each once.
    pub fn kernel_names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for k in self.0.iter().flat_map(PatternInfo::kernels) {
            if !names.contains(&k) {
                names.push(k);
            }
        }
        names
    }

    /// Every sweep of every pattern, in the patterns' order, the read-only ones (whose ceiling
    /// is the read stream) first: the order `demo sweep` runs them when none is named.
    pub(crate) fn sweeps(self) -> impl Iterator<Item = &'static SweepSpec> {
        let all = move || self.0.iter().flat_map(|p| p.sweeps());
        all()
            .filter(|s| s.reads_only)
            .chain(all().filter(|s| !s.reads_only))
    }

    /// The sweep named `name`.
    pub(crate) fn find_sweep(self, name: &str) -> Option<&'static SweepSpec> {
        self.sweeps().find(|s| s.name == name)
    }

    /// The sweeps named on the command line, each once, in the order given; every sweep if
    /// none is.
    ///
    /// # Errors
    /// One sentence naming an unknown pattern and the known ones.
    pub(crate) fn parse_sweeps(self, names: &[String]) -> Result<Vec<&'static SweepSpec>> {
        if names.is_empty() {
            return Ok(self.sweeps().collect());
        }
        let mut sweeps: Vec<&'static SweepSpec> = Vec::new();
        for name in names {
            let Some(p) = self.find_sweep(name) else {
                let known: Vec<&str> = self.sweeps().map(|p| p.name).collect();
                crate::engine::args::refuse!(
                    "demo sweep: unknown pattern `{name}` (the sweep knows {})",
                    known.join(", ")
                );
            };
            if !sweeps.iter().any(|q| q.name == p.name) {
                sweeps.push(p);
            }
        }
        Ok(sweeps)
    }

    /// `demo list`: the patterns and what they run, then every variant with its kernels; with
    /// `names`, only the names; with `sanitize`, only the sanitizer cases (`PATTERN ARGS...`).
    pub(crate) fn print_list(self, names: bool, sanitize: bool) {
        if names {
            for p in self.0 {
                println!("{}", p.name);
            }
            return;
        }
        if sanitize {
            for p in self.0 {
                for args in (p.sanitize)() {
                    println!("{}", format!("{} {args}", p.name).trim_end());
                }
            }
            return;
        }
        let mut patterns = Table::new();
        patterns
            .load_preset(ASCII_MARKDOWN)
            .set_header(["pattern", "what it runs"]);
        let mut variants = Table::new();
        variants
            .load_preset(ASCII_MARKDOWN)
            .set_header(["pattern", "variant", "kernels"]);
        for p in self.0 {
            patterns.add_row([p.name.to_string(), p.summary()]);
            for v in (p.variants)() {
                variants.add_row([p.name.to_string(), v.name, compact(&v.kernels)]);
            }
        }
        println!("{patterns}\n\n{variants}");
    }
}

/// The kebab-case name clap gives a `Variant`.
pub(crate) fn variant_name(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

pub(crate) fn variant(name: impl Into<String>, kernels: &[&'static str]) -> VariantInfo {
    VariantInfo {
        name: name.into(),
        kernels: kernels.to_vec(),
    }
}

pub(crate) fn kernels_each<V: ValueEnum + Copy>(
    all: &[V],
    kernels: impl Fn(V) -> Vec<&'static str>,
) -> Vec<VariantInfo> {
    all.iter()
        .map(|&v| VariantInfo {
            name: variant_name(v),
            kernels: kernels(v),
        })
        .collect()
}

pub(crate) fn one_kernel_each<V: ValueEnum + Copy>(
    all: &[V],
    kernel: impl Fn(V) -> &'static str,
) -> Vec<VariantInfo> {
    kernels_each(all, |v| vec![kernel(v)])
}

/// The entries `entry` gives for every odd mask width up to `max`, each once.
pub(crate) fn widths(max: usize, entry: impl Fn(usize) -> &'static str) -> Vec<&'static str> {
    let mut names = Vec::new();
    for w in (1..=max).step_by(2) {
        let name = entry(w);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A family of entries that differ in a trailing number (`..._w1`, `..._w3`) as
/// `..._w{1,3}`; other lists joined by commas.
fn compact(kernels: &[&str]) -> String {
    if kernels.is_empty() {
        return "-".into();
    }
    let first = kernels[0];
    let mut prefix = first.len();
    for k in &kernels[1..] {
        prefix = prefix.min(
            first
                .bytes()
                .zip(k.bytes())
                .take_while(|(a, b)| a == b)
                .count(),
        );
    }
    // The prefix must not end inside a number (`_1024`, `_128` share `_1`).
    let prefix = first[..prefix].trim_end_matches(|c: char| c.is_ascii_digit());
    let numbered = kernels.iter().all(|k| {
        let rest = &k[prefix.len()..];
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    });
    if kernels.len() < 3 || !numbered {
        return kernels.join(", ");
    }
    let numbers: Vec<&str> = kernels.iter().map(|k| &k[prefix.len()..]).collect();
    format!("{prefix}{{{}}}", numbers.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_families() {
        assert_eq!(compact(&[]), "-");
        assert_eq!(compact(&["a", "b"]), "a, b");
        assert_eq!(compact(&["k_w1", "k_w3", "k_w11"]), "k_w{1,3,11}");
        assert_eq!(compact(&["r_64", "r_128", "r_1024"]), "r_{64,128,1024}");
        assert_eq!(compact(&["x_a", "x_b", "x_c"]), "x_a, x_b, x_c");
    }
}
