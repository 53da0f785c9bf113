//! Quoting text from the user in a message: a key, name or value given as megabytes
//! of text is shown by its start and its length, never echoed whole; so is a long
//! line of a file a parser's message quotes.

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

/// A multi-line message (a parser's, quoting a line of the file and marking a
/// column under it) with every line longer than 120 bytes cut to its first 100 and
/// its length, so a marker line stays aligned with the line it marks.
pub fn shorten_lines(text: &str) -> String {
    const LONG: usize = 120;
    const SHOWN: usize = 100;
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.len() <= LONG {
            out.push_str(line);
            continue;
        }
        let mut end = SHOWN;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        out.push_str(&format!("{}... ({} bytes)", &line[..end], line.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{shorten, shorten_lines};

    #[test]
    fn long_lines_of_a_message_are_cut() {
        let text = format!(
            "error here\n  1 | {}\n    | {}^",
            "k".repeat(5000),
            " ".repeat(60)
        );
        let cut = shorten_lines(&text);
        assert_eq!(
            cut,
            format!(
                "error here\n  1 | {}... (5006 bytes)\n    | {}^",
                "k".repeat(94),
                " ".repeat(60)
            )
        );
    }

    #[test]
    fn long_text_is_cut_at_a_character_boundary() {
        assert_eq!(shorten("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(shorten(&long), format!("{}... (200 bytes)", "é".repeat(24)));
    }
}
