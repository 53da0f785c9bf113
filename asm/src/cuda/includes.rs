//! What a `.cu` file may include: before clang runs, no `#include` it names
//! (as written) may be a pipe, a device or a folder ([`check_named_includes`]);
//! after the preprocessor's listing, every file it read must sit in the kernel's
//! folder or a folder given with `-I DIR`, or be one of clang's system headers
//! ([`confine`], from [`parse_deps`] and [`system_dirs`]); and a failed listing
//! refuses the files outside that its messages name ([`diagnostic_files`]).

use super::CudaError;
use std::path::{Path, PathBuf};

/// Most files [`check_named_includes`] reads.
const MAX_SCANNED: usize = 1024;

/// Most bytes [`check_named_includes`] reads in all (each file once, however
/// many spellings name it).
const MAX_SCANNED_BYTES: u64 = spu_io::MAX_INPUT_BYTES;

/// Refuses an `#include` (as written: `"name"` or `<name>`, in the `.cu` file
/// and, transitively, in the regular files it names) that names a pipe, a device
/// or a folder, which clang's preprocessor would block on or fail at: found in
/// the including file's folder or one of `include_dirs`, as clang looks. Only
/// files inside the kernel's folder and `include_dirs` are read (the listing
/// refuses the others); names made by macros are left to clang.
pub(super) fn check_named_includes(cu: &Path, include_dirs: &[PathBuf]) -> Result<(), CudaError> {
    let allowed = Allowed::new(cu, include_dirs);
    let roots = &allowed.roots;
    let inside = |p: &Path| {
        p.canonicalize()
            .is_ok_and(|r| roots.iter().any(|d| r.starts_with(d)))
    };
    let mut queue = vec![cu.to_path_buf()];
    let mut seen = std::collections::HashSet::new();
    let mut budget = MAX_SCANNED_BYTES;
    while let Some(file) = queue.pop() {
        let real = file.canonicalize().unwrap_or_else(|_| file.clone());
        if seen.len() >= MAX_SCANNED || !seen.insert(real) {
            continue;
        }
        let Some(Ok(bytes)) = spu_io::read_regular(&file, budget) else {
            continue;
        };
        budget = budget.saturating_sub(bytes.len() as u64);
        let text = String::from_utf8_lossy(&bytes);
        let here = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix('#') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix("include") else {
                continue;
            };
            let rest = rest.trim_start();
            let (close, quoted) = match rest.chars().next() {
                Some('"') => ('"', true),
                Some('<') => ('>', false),
                _ => continue,
            };
            let Some(name) = rest[1..].split(close).next().filter(|n| !n.is_empty()) else {
                continue;
            };
            // clang's list of the files it read separates names by white space
            // and cannot show these characters: a name holding one would be
            // read back as other names.
            if name.contains(['\t', '\u{b}', '\u{c}', '\r']) {
                return Err(CudaError::Unlisted {
                    file: spu_io::quote::path(cu),
                    header: spu_io::quote::escape(name).into_owned(),
                });
            }
            let dirs = quoted
                .then(|| here.clone())
                .into_iter()
                .chain(include_dirs.iter().cloned());
            let Some((path, meta)) = dirs
                .map(|d| d.join(name))
                .find_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m)))
            else {
                continue;
            };
            if meta.is_file() {
                if inside(&path) {
                    queue.push(path);
                }
            } else {
                return Err(CudaError::Io {
                    file: spu_io::quote::path(cu),
                    why: format!(
                        "`#include` names `{}`, which is not a regular file (a folder, pipe or device): clang would wait on it or fail; copy its text into a file beside the kernel",
                        spu_io::quote::path(&path)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The files clang's messages may name: `FILE:LINE:COL: error: ...` and `In
/// file included from FILE:LINE:`. A name may itself hold `:12:` (a folder
/// `a:1:`), so every text before a `:LINE:` or `:LINE,` on a line is a
/// candidate; [`confine`] checks those that name a file.
pub(super) fn diagnostic_files(said: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    // Up to 1 MiB of messages: candidates are deduplicated through a set.
    let mut seen = std::collections::HashSet::new();
    for line in said.lines() {
        let line = line.strip_prefix("In file included from ").unwrap_or(line);
        let places = line
            .char_indices()
            .filter(|&(_, c)| c == ':')
            .filter(|&(i, _)| {
                let rest = &line[i + 1..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                i > 0 && digits > 0 && matches!(rest.as_bytes().get(digits), Some(b':' | b','))
            });
        for (i, _) in places {
            if seen.insert(&line[..i]) {
                files.push(line[..i].to_string());
            }
        }
    }
    files
}

/// The files of a make rule `x: a b\ c \` as clang writes it with `-M -MT x`:
/// a space is written `\ ` (and the backslashes before it doubled), `#` as
/// `\#`, `$` as `$$`; any other character, tabs and other spaces included, as
/// it is. A name clang cannot write unambiguously (with a tab or a line break)
/// comes out in pieces that name no file, which [`confine`] refuses.
pub(super) fn parse_deps(text: &str) -> Vec<String> {
    let text = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let body = text.strip_prefix("x:").unwrap_or(&text);
    let mut files = Vec::new();
    let mut word = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let mut run = 1;
                while chars.peek() == Some(&'\\') {
                    chars.next();
                    run += 1;
                }
                match chars.peek() {
                    // 2n + 1 backslashes: n of the name's, then a space.
                    Some(' ') if run % 2 == 1 => {
                        chars.next();
                        word.extend(std::iter::repeat_n('\\', run / 2));
                        word.push(' ');
                    }
                    Some('#') => {
                        chars.next();
                        word.extend(std::iter::repeat_n('\\', run - 1));
                        word.push('#');
                    }
                    _ => word.extend(std::iter::repeat_n('\\', run)),
                }
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            ' ' | '\t' | '\n' | '\r' => {
                if !word.is_empty() {
                    files.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        files.push(word);
    }
    files
}

/// clang's system include folders, from the search list `-v` prints.
pub(super) fn system_dirs(said: &str) -> Vec<PathBuf> {
    said.lines()
        .skip_while(|l| !l.starts_with("#include <...> search starts here:"))
        .skip(1)
        .take_while(|l| !l.starts_with("End of search list."))
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_suffix(" (framework directory)").unwrap_or(l);
            Path::new(l).canonicalize().ok()
        })
        .collect()
}

/// The folders a `.cu` file may include from: its own and `-I DIR`s, as named
/// (for messages) and resolved.
pub(super) struct Allowed {
    named: Vec<PathBuf>,
    roots: Vec<PathBuf>,
}

impl Allowed {
    pub(super) fn new(cu: &Path, include_dirs: &[PathBuf]) -> Allowed {
        let folder = match cu.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let named: Vec<PathBuf> = std::iter::once(folder)
            .chain(include_dirs.iter().cloned())
            .collect();
        let roots = named.iter().filter_map(|d| d.canonicalize().ok()).collect();
        Allowed { named, roots }
    }

    /// Whether the file at the resolved path `real` sits in an allowed folder.
    pub(super) fn holds(&self, real: &Path) -> bool {
        self.roots.iter().any(|r| real.starts_with(r))
    }

    /// The refusal of `header` (as `cu` names it), which resolves to `real`.
    pub(super) fn outside(&self, cu: &Path, header: &str, real: &Path) -> CudaError {
        let quoted: Vec<String> = self
            .named
            .iter()
            .map(|d| format!("`{}`", spu_io::quote::path(d)))
            .collect();
        CudaError::Outside {
            file: spu_io::quote::path(cu),
            header: spu_io::quote::escape(header).into_owned(),
            real: spu_io::quote::path(real),
            roots: quoted.join(", "),
            folder: spu_io::quote::path(real.parent().unwrap_or(real)),
        }
    }
}

/// Names of files to check: clang's list of what it read ([`parse_deps`]), or
/// candidates from its messages ([`diagnostic_files`]), of which only those
/// that name a file count.
#[derive(Debug)]
pub(super) enum Deps {
    Listed(Vec<String>),
    Named(Vec<String>),
}

/// The files `cu` includes (`deps`) that are the user's, each checked to sit in
/// `cu`'s folder or one of `include_dirs`; clang's system headers and the SPU's
/// header in `temp` pass unlisted, any other file is refused.
pub(super) fn confine(
    cu: &Path,
    include_dirs: &[PathBuf],
    temp: &Path,
    deps: &Deps,
    system: &[PathBuf],
) -> Result<Vec<PathBuf>, CudaError> {
    let (deps, listed) = match deps {
        Deps::Listed(d) => (d, true),
        Deps::Named(d) => (d, false),
    };
    let allowed = Allowed::new(cu, include_dirs);
    let temp = temp.canonicalize().unwrap_or_else(|_| temp.to_path_buf());
    let own = cu.canonicalize().ok();
    let mut headers = Vec::new();
    for dep in deps {
        let path = PathBuf::from(dep);
        // A name that resolves to no file (one `-MG` lists as missing, or one
        // clang could not write unambiguously) cannot be checked: refused.
        let Ok(real) = path.canonicalize() else {
            // Texts of messages that only look like names: not files.
            if !listed {
                continue;
            }
            return Err(CudaError::Unlisted {
                file: spu_io::quote::path(cu),
                header: spu_io::quote::escape(dep).into_owned(),
            });
        };
        if Some(&real) == own.as_ref() || real.starts_with(&temp) {
            continue;
        }
        if allowed.holds(&real) {
            headers.push(path);
        } else if !system.iter().any(|s| real.starts_with(s)) {
            return Err(allowed.outside(cu, dep, &real));
        }
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_their_files() {
        let said = "In file included from <built-in>:1:\nIn file included from k/k.cu:1:\n../p/s.txt:3:2: error: invalid preprocessing directive\n#x\n ^\nk/k.cu:2:2: error: stop\n #include \"/usr/include/x\" \n";
        let files = diagnostic_files(said);
        for name in ["<built-in>", "k/k.cu", "../p/s.txt"] {
            assert!(files.iter().any(|f| f == name), "{name}: {files:?}");
        }
    }

    #[test]
    fn dependency_lists_read_as_make_writes_them() {
        let text = "x: k.cu /tmp/d/spu_cuda.h \\\n  sub/a\\ b.h c$$d.h e\\#f.h \\\r\n  last.h\n";
        assert_eq!(
            parse_deps(text),
            [
                "k.cu",
                "/tmp/d/spu_cuda.h",
                "sub/a b.h",
                "c$d.h",
                "e#f.h",
                "last.h"
            ]
        );
    }

    #[test]
    fn names_with_backslashes_and_unusual_spaces_read_as_clang_writes_them() {
        // `x\\y` (two backslashes, no space after), `a\ b` (a backslash, then a
        // space: three backslashes written), a no-break space, a tab (clang does
        // not escape it: two pieces).
        let text = "x: x\\\\y/h.h a\\\\\\ b.h c\u{a0}d.h e\tf.h\n";
        assert_eq!(
            parse_deps(text),
            ["x\\\\y/h.h", "a\\ b.h", "c\u{a0}d.h", "e", "f.h"]
        );
    }

    #[test]
    fn every_name_a_message_line_may_hold_is_a_candidate() {
        let said = "./a:1:/../p/s.h:3:4: error: x\n";
        let files = diagnostic_files(said);
        assert!(files.contains(&"./a".to_string()), "{files:?}");
        assert!(files.contains(&"./a:1:/../p/s.h".to_string()), "{files:?}");
    }

    #[test]
    fn system_folders_come_from_the_search_list() {
        let said = "clang -cc1 ...\n#include \"...\" search starts here:\n /tmp\n#include <...> search starts here:\n /\n /nonexistent-folder\nEnd of search list.\n";
        assert_eq!(system_dirs(said), [PathBuf::from("/")]);
    }
}
