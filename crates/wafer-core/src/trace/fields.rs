//! Field parsing shared by the text readers: exact integers and decimals,
//! with reasons that name the field ("negative offset", "size overflows").

/// Parse an unsigned integer field.
#[inline]
pub fn uint(s: &str, what: &str) -> Result<u64, String> {
    let s = s.trim();
    s.parse::<u64>().map_err(|_| {
        if s.starts_with('-') {
            format!("negative {what} '{s}'")
        } else if s.is_empty() {
            format!("missing {what}")
        } else if s.bytes().all(|b| b.is_ascii_digit()) {
            format!("{what} '{s}' overflows 64 bits")
        } else {
            format!("{what} '{s}' is not an unsigned integer")
        }
    })
}

/// Parse a non-negative decimal number of `unit` and return it in units of
/// 10^-`digits` of that unit, exactly (no float rounding): `decimal("1.5", 3, "x")`
/// is 1500. Extra fraction digits beyond `digits` are truncated.
#[inline]
pub fn decimal(s: &str, digits: u32, what: &str) -> Result<u64, String> {
    let s = s.trim();
    let bad = || {
        if s.starts_with('-') {
            format!("negative {what} '{s}'")
        } else {
            format!("{what} '{s}' is not a non-negative decimal number")
        }
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return Err(bad());
    }
    let int_v: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| bad())?
    };
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let mut frac_v = 0u64;
    for i in 0..digits as usize {
        let d = frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as u64);
        frac_v = frac_v * 10 + d;
    }
    int_v
        .checked_mul(10u64.pow(digits))
        .and_then(|v| v.checked_add(frac_v))
        .ok_or_else(|| format!("{what} '{s}' overflows"))
}

/// `a * b`, or an overflow error naming the field.
#[inline]
pub fn mul(a: u64, b: u64, what: &str) -> Result<u64, String> {
    a.checked_mul(b)
        .ok_or_else(|| format!("{what} {a} x {b} overflows 64 bits"))
}

/// The first `N` pieces of a line, and how many pieces it has in all,
/// without allocating (the parsers run once per trace line).
#[inline]
pub fn first<'a, const N: usize>(pieces: impl Iterator<Item = &'a str>) -> ([&'a str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    for p in pieces {
        if n < N {
            f[n] = p;
        }
        n += 1;
    }
    (f, n)
}

/// At least `want` fields, or a reason.
#[inline]
pub fn expect_fields(got: usize, want: usize, layout: &str) -> Result<(), String> {
    if got < want {
        Err(format!("expected {want} fields ({layout}), found {got}"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(decimal("1.5", 3, "x"), Ok(1500));
        assert_eq!(decimal("0.000000001", 9, "x"), Ok(1));
        assert_eq!(decimal("12", 9, "x"), Ok(12_000_000_000));
        assert_eq!(decimal(".25", 2, "x"), Ok(25));
        assert_eq!(decimal("3.14159", 2, "x"), Ok(314));
        assert!(decimal("-1.0", 3, "x").unwrap_err().contains("negative"));
        assert!(decimal("1e5", 3, "x").is_err());
        assert!(decimal(".", 3, "x").is_err());
        assert!(decimal("99999999999999999999", 0, "x").is_err());
    }

    #[test]
    fn first_fields_and_total_count() {
        assert_eq!(first::<3>("a,b,c,d".split(',')), (["a", "b", "c"], 4));
        assert_eq!(first::<3>("a,b".split(',')), (["a", "b", ""], 2));
    }

    #[test]
    fn integers_explain_failures() {
        assert_eq!(uint(" 42 ", "size"), Ok(42));
        assert!(uint("-3", "offset")
            .unwrap_err()
            .contains("negative offset"));
        assert!(uint("99999999999999999999", "offset")
            .unwrap_err()
            .contains("overflows"));
        assert!(uint("4k", "size")
            .unwrap_err()
            .contains("not an unsigned integer"));
        assert!(uint("", "size").unwrap_err().contains("missing size"));
    }
}
