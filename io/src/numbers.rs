//! Numbers as the tools print them for people: digits grouped in threes,
//! counts with their noun in the singular or the plural, and floats kept short.

/// Groups digits in threes: `98 304`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `n` and a noun that takes an `s` in the plural: `1 block`, `8 blocks`.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A number for a message: exponent form when plain form would run long
/// (`1e-300`, not three hundred zeros).
pub fn short(v: f64) -> String {
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn very_small_and_large_numbers_are_short() {
        assert_eq!(super::short(-1e-300), "-1e-300");
        assert_eq!(super::short(2.5e20), "2.5e20");
        assert_eq!(super::short(0.125), "0.125");
        assert_eq!(super::short(0.0), "0");
    }

    #[test]
    fn digits_are_grouped_in_threes() {
        assert_eq!(super::grouped(0), "0");
        assert_eq!(super::grouped(999), "999");
        assert_eq!(super::grouped(98_304), "98 304");
        assert_eq!(super::grouped(1_073_741_824), "1 073 741 824");
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(super::counted(1, "block"), "1 block");
        assert_eq!(super::counted(0, "block"), "0 blocks");
        assert_eq!(super::counted(1024, "thread"), "1024 threads");
    }
}
