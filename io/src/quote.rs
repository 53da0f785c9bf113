//! Quoting text from the user in a message: a key, name or value given as megabytes
//! of text is shown by its start and its length, never echoed whole.

/// Text from the user as a message quotes it: whole if short, else its start and
/// its length.
pub fn shorten(text: &str) -> String {
    const SHOWN: usize = 48;
    if text.len() <= SHOWN + 16 {
        return text.to_string();
    }
    let mut end = SHOWN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &text[..end], text.len())
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        assert_eq!(shorten("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(shorten(&long), format!("{}... (200 bytes)", "é".repeat(24)));
    }
}
