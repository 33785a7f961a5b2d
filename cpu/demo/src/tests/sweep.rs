//! The binary's sweeps (`engine::sweep`, `Pattern::SWEEPS`): names, cases, the order.

use crate::PATTERNS;
use crate::engine::sweep::{Case, SweepSpec};
use crate::tests::patterns;

fn spec(name: &str) -> &'static SweepSpec {
    patterns()
        .find_sweep(name)
        .unwrap_or_else(|| panic!("no sweep {name}"))
}

fn names(specs: &[&SweepSpec]) -> Vec<&'static str> {
    specs.iter().map(|s| s.name).collect()
}

#[test]
fn patterns_parse_in_order_once_and_all_by_default() {
    // All by default: every pattern's sweeps once, the read-only ones first, each group in
    // PATTERNS order (the list is derived, so a new pattern's sweeps need no line here).
    let all = names(&patterns().parse_sweeps(&[]).unwrap());
    let in_order: Vec<&SweepSpec> = PATTERNS.iter().flat_map(|p| p.sweeps()).collect();
    let (reads, rest): (Vec<&SweepSpec>, Vec<&SweepSpec>) =
        in_order.into_iter().partition(|s| s.reads_only);
    assert_eq!(all, names(&[reads, rest].concat()));
    assert!(all.starts_with(&["reduce-i32", "reduce-f32"]));
    assert!(all.contains(&"conv2d") && all.contains(&"vector-add"));
    let given = ["conv2d", "reduce-i32", "conv2d"].map(String::from);
    assert_eq!(
        names(&patterns().parse_sweeps(&given).unwrap()),
        ["conv2d", "reduce-i32"]
    );
    let e = patterns()
        .parse_sweeps(&["reduce".into()])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "demo sweep: unknown pattern `reduce` (the sweep knows {})",
            all.join(", ")
        )
    );
    assert!(!e.contains('\n'), "one sentence: {e}");
}

#[test]
fn the_cases_are_the_ones_asked_for() {
    let n = |p| -> Vec<usize> {
        spec(p)
            .cases()
            .iter()
            .map(|c| c.elements().unwrap())
            .collect()
    };
    assert_eq!(
        n("reduce-i32"),
        [16, 18, 20, 22, 24, 26, 28, 30].map(|k| 1usize << k)
    );
    assert_eq!(n("reduce-f32"), n("reduce-i32"));
    assert_eq!(
        n("vector-add"),
        [16, 18, 20, 22, 24, 26, 28].map(|k| 1usize << k)
    );
    let t = spec("transpose").cases();
    assert_eq!(t.len(), 12);
    assert!(t.iter().any(|c| c.shape == [3, 8191]));
    assert!(t.iter().any(|c| c.shape == [1 << 22, 4]));
    assert_eq!(t[4].label(), "16384 x 16384");
    let c1 = spec("conv1d").cases();
    assert_eq!(c1.len(), 7 + 15);
    assert_eq!(c1.iter().filter(|c| c.width == Some(7)).count(), 7);
    assert!(
        c1.iter()
            .any(|c| c.shape == [1 << 26] && c.width == Some(31))
    );
    assert_eq!(c1[0].label(), "2^16, w 7");
    let c2 = spec("conv2d").cases();
    assert_eq!(c2.len(), 5 + 15);
    assert_eq!(c2.last().unwrap().label(), "8192 x 8192, 31 x 31");
    let s2 = spec("conv2d-separable").cases();
    assert_eq!(s2.len(), 15);
    assert!(s2.iter().all(|c| c.shape == [8192, 8192]));
    assert_eq!(s2[0].label(), "8192 x 8192, 3 x 3");
}

/// Every sweep: a unique name, cases each once and all of that sweep, a convolution's
/// widths at one shape (the shape of its last case) and its size sweep at its width.
#[test]
fn every_sweep_is_well_formed() {
    let all: Vec<&SweepSpec> = patterns().sweeps().collect();
    assert!(!all.is_empty());
    for (i, s) in all.iter().enumerate() {
        assert!(
            all[..i].iter().all(|t| t.name != s.name),
            "{} twice",
            s.name
        );
        if let Some(p) = patterns().find(s.name) {
            let own = p.sweeps().iter().any(|t| t.name == s.name);
            assert!(own, "{} is another pattern's name", s.name);
        }
        let cases = s.cases();
        assert!(!cases.is_empty(), "{} has no case", s.name);
        for (j, c) in cases.iter().enumerate() {
            assert!(!cases[..j].contains(c), "{} {} twice", s.name, c.label());
            assert_eq!(c.pattern, s.name);
            assert!(c.elements().is_some_and(|n| n > 0), "{}", c.label());
            assert_eq!(
                c.width.is_some(),
                s.default_width.is_some(),
                "{}",
                c.label()
            );
        }
        if let Some(w) = s.default_width {
            assert!(cases.iter().any(|c| c.width == Some(w)), "{}", s.name);
        }
    }
}

/// What `demo sweep --list-cases` prints (and `peers.py --sweep` reads) is the cases, in
/// order, and reads back as them.
#[test]
fn listed_cases_read_back() {
    let patterns = patterns().parse_sweeps(&[]).unwrap();
    let cases: Vec<Case> = patterns.iter().flat_map(|p| p.cases()).collect();
    let json = serde_json::to_string_pretty(&cases).unwrap();
    let back: Vec<Case> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, cases);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        value[0],
        serde_json::json!({"pattern": "reduce-i32", "shape": [65536], "width": null})
    );
}
