//! The commands of a document's ```console blocks: each line starting with `$ ` is
//! a command, and the lines after it, up to the next command, are what it prints.
//! The tutorial and the classroom guide are both checked this way.

/// One command of a document and the output shown under it.
#[derive(Debug)]
pub struct Step {
    pub command: String,
    pub expected: String,
}

/// The steps of every ```console block of `markdown`, in order.
pub fn steps(markdown: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut in_console = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Step {
                command: cmd.to_string(),
                expected: String::new(),
            });
        } else if let Some(step) = out.last_mut() {
            step.expected.push_str(line);
            step.expected.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_take_the_lines_under_them_and_other_blocks_are_skipped() {
        let md = "```sh\n$ not this\n```\n```console\n$ a\none\ntwo\n$ b\n```\n$ outside\n";
        let s = steps(md);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].command.as_str(), s[0].expected.as_str()),
            ("a", "one\ntwo\n")
        );
        assert_eq!((s[1].command.as_str(), s[1].expected.as_str()), ("b", ""));
    }
}
