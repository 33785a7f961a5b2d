//! Argument values checked before any device work: the value parsers the patterns' clap
//! arguments share, and [`ArgError`], the refusal of a combination of arguments that no single
//! parser sees (`registry::Pattern::check`, a layer above). Both exit with status 2,
//! as clap's own usage errors; a run-time failure (the driver, the device, memory, a file that
//! cannot be read) exits with 1.

use std::ops::RangeInclusive;

/// An argument error found after parsing but before any device work: printed as one sentence,
/// exit status 2 (as clap's usage errors).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ArgError(pub String);

/// Returns an [`ArgError`] from the enclosing function (`anyhow::Result`), formatted as
/// `format!`.
macro_rules! refuse {
    ($($t:tt)*) => {
        return Err(anyhow::Error::new($crate::engine::args::ArgError(format!($($t)*))))
    };
}
pub(crate) use refuse;

/// The exit status of a failed run: 2 for an [`ArgError`] anywhere in its chain, else 1.
pub(crate) fn exit_status(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| c.is::<ArgError>()) {
        2
    } else {
        1
    }
}

/// A non-negative integer of `range`: an error says the range.
fn integer_in(s: &str, range: RangeInclusive<u64>) -> Result<u64, String> {
    let v: u64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number"))?;
    match (range.contains(&v), *range.end()) {
        (true, _) => Ok(v),
        (false, u64::MAX) => Err(format!("{v} is less than {}, the least", range.start())),
        (false, end) => Err(format!("{v} is outside {}..={end}", range.start())),
    }
}

/// An odd mask width, `1..=MAX` (`--mask-width` of the convolutions).
pub(crate) fn odd_width<const MAX: usize>(s: &str) -> Result<usize, String> {
    let w = integer_in(s, 1..=MAX as u64)
        .map_err(|e| format!("{e}: the width must be odd, 1 to {MAX}"))?;
    if w % 2 == 0 {
        return Err(format!("{w} is even: the width must be odd, 1 to {MAX}"));
    }
    Ok(w as usize)
}

/// A power of two in `MIN..=MAX` (`demo reduce --block`).
pub(crate) fn power_of_two<const MIN: u32, const MAX: u32>(s: &str) -> Result<u32, String> {
    let v = integer_in(s, u64::from(MIN)..=u64::from(MAX))
        .map_err(|e| format!("{e}: a power of two, {MIN} to {MAX}, expected"))?;
    if !v.is_power_of_two() {
        return Err(format!("{v} is not a power of two ({MIN} to {MAX})"));
    }
    Ok(v as u32)
}

/// A count of `MIN..=MAX` (sizes with a floor or a ceiling that holds on every machine).
pub(crate) fn count_in<const MIN: u64, const MAX: u64>(s: &str) -> Result<usize, String> {
    let v = integer_in(s, MIN..=MAX)?;
    usize::try_from(v).map_err(|_| format!("{v} does not fit this machine's usize"))
}

/// A byte count of `MIN..=u64::MAX` (`--max-bytes`, `--max-size`).
pub(crate) fn bytes_from<const MIN: u64>(s: &str) -> Result<u64, String> {
    integer_in(s, MIN..=u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_odd_and_in_range() {
        assert_eq!(odd_width::<31>("1"), Ok(1));
        assert_eq!(odd_width::<31>("31"), Ok(31));
        for bad in ["0", "4", "32", "33", "-1", "x", ""] {
            let e = odd_width::<31>(bad).unwrap_err();
            assert!(
                e.contains("odd, 1 to 31") || e.contains("whole number"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn powers_of_two_in_range() {
        assert_eq!(power_of_two::<64, 1024>("64"), Ok(64));
        assert_eq!(power_of_two::<64, 1024>("1024"), Ok(1024));
        for bad in ["100", "32", "2048", "0", "many"] {
            assert!(power_of_two::<64, 1024>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_and_bytes() {
        assert_eq!(count_in::<1, 10>("10"), Ok(10));
        assert!(
            count_in::<1, 10>("0")
                .unwrap_err()
                .contains("outside 1..=10")
        );
        assert_eq!(bytes_from::<1024>("1024"), Ok(1024));
        assert!(bytes_from::<1024>("1023").is_err());
    }

    #[test]
    fn arg_errors_exit_2_others_1() {
        fn refused() -> anyhow::Result<()> {
            refuse!("--x {} is wrong", 3)
        }
        let e = refused().unwrap_err();
        assert_eq!(e.to_string(), "--x 3 is wrong");
        assert_eq!(exit_status(&e), 2);
        assert_eq!(exit_status(&e.context("demo p")), 2);
        assert_eq!(exit_status(&anyhow::anyhow!("no driver")), 1);
    }
}
