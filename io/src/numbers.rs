//! Numbers as the tools print them for people: digits grouped in threes.

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

#[cfg(test)]
mod tests {
    #[test]
    fn digits_are_grouped_in_threes() {
        assert_eq!(super::grouped(0), "0");
        assert_eq!(super::grouped(999), "999");
        assert_eq!(super::grouped(98_304), "98 304");
        assert_eq!(super::grouped(1_073_741_824), "1 073 741 824");
    }
}
