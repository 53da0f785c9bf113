//! Reading model files and following `extends`. The model named on the command
//! line may be any `.toml` file; every file its `extends` chain names must be a
//! regular file that resolves (after following links) inside that model's folder,
//! as `#include`d kernel files must, and is read through the one bounded reader. A
//! model from an untrusted source can therefore neither quote files elsewhere on
//! the machine nor hang the profiler on a pipe. Every key remembers the file that
//! set it, so a problem in an extended file is blamed on that file.

use super::{BUILT_IN, BuiltIn, ModelError};
use spu_io::quote::shorten;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Most `extends` in one chain (a cycle is reported as one before this is reached).
const MAX_DEPTH: usize = 8;

/// Which file set each key of a merged model.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Origins {
    /// The model as named (its file, or the built-in name): blamed for problems of
    /// the whole model.
    pub top: String,
    /// `section` and `section.key` -> the file that set it.
    keys: BTreeMap<String, String>,
}

impl Origins {
    /// The file to blame for `key` (`section.key` or `section`): the one that set
    /// it, else the one that set its section, else the model itself.
    pub fn of(&self, key: &str) -> &str {
        let section = key.split('.').next().unwrap_or(key);
        self.keys
            .get(key)
            .or_else(|| self.keys.get(section))
            .unwrap_or(&self.top)
    }
}

/// The kinds of model (`model.kind`).
const KINDS: &[&str] = &["components", "instruction-classes"];

/// `a components`, `an instruction-classes`.
fn with_article(kind: &str) -> String {
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}

fn built_in(name: &str) -> Option<&'static BuiltIn> {
    BUILT_IN.iter().find(|b| b.name == name)
}

fn built_in_list() -> String {
    BUILT_IN
        .iter()
        .map(|b| format!("`{}`", b.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A folder relative `extends` start from: resolved (for the confinement check)
/// and as the user would write it (for messages and output checks).
#[derive(Debug, Clone)]
pub(super) struct Folder {
    pub real: PathBuf,
    pub shown: PathBuf,
    /// The model file itself, resolved (the one named on the command line only),
    /// so an `extends` back to it is reported as a cycle.
    pub model: Option<PathBuf>,
}

/// A model named on the command line: (display name, text, its folder, to which
/// its `extends` chain is confined; `None` for a built-in model).
pub(super) fn source(name_or_path: &str) -> Result<(String, String, Option<Folder>), ModelError> {
    if let Some(b) = built_in(name_or_path) {
        return Ok((format!("`{}` (built in)", b.name), b.toml.to_string(), None));
    }
    // Only `.toml` files are models: anything else is never read, so a mistyped
    // name cannot make the profiler quote a file that is not a model.
    if !name_or_path.ends_with(".toml") {
        return Err(ModelError::Unknown {
            name: shorten(name_or_path),
            list: built_in_list(),
        });
    }
    // Named on the command line, so shown whole (escaped), as other inputs are.
    let io = |why: String| ModelError::Io {
        file: spu_io::quote::escape(name_or_path).into_owned(),
        why,
    };
    let path = Path::new(name_or_path);
    let text = spu_io::input::read_text_without_waiting(path).map_err(|e| io(e.reason()))?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let real = folder
        .canonicalize()
        .map_err(|e| io(format!("cannot resolve its folder: {e}")))?;
    let folder = Folder {
        real,
        shown: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        model: path.canonicalize().ok(),
    };
    Ok((
        format!("`{}`", spu_io::quote::escape(name_or_path)),
        text,
        Some(folder),
    ))
}

/// Where `extends` may reach: the confining folder (canonical) and the files read
/// so far. `None` for a model given as text or a built-in one: built-in bases only.
pub(super) type Confine<'a> = Option<(&'a Folder, &'a mut Vec<PathBuf>)>;

/// The model `file` (with `text`) over its `extends` chain, and where each key
/// came from.
pub(super) fn merged(
    file: &str,
    text: &str,
    confine: Confine<'_>,
) -> Result<(toml::Table, Origins), ModelError> {
    let mut origins = Origins {
        top: file.to_string(),
        keys: BTreeMap::new(),
    };
    let mut none = Vec::new();
    let (root, files) = match confine {
        Some((root, files)) => (Some(root), files),
        None => (None, &mut none),
    };
    let mut chain = Chain {
        root: root.map(|r| r.real.as_path()),
        files,
        origins: &mut origins,
        names: vec![file.to_string()],
        seen: vec![root.and_then(|r| r.model.clone())],
    };
    let table = chain.merge(file, text, root.cloned())?;
    Ok((table, origins))
}

struct Chain<'a> {
    root: Option<&'a Path>,
    files: &'a mut Vec<PathBuf>,
    origins: &'a mut Origins,
    /// The models of the chain so far, from the one named on the command line, as
    /// messages name them, and resolved (`None` for a built-in model).
    names: Vec<String>,
    seen: Vec<Option<PathBuf>>,
}

/// The model kind a `[model]` table declares (`components` when it says none).
fn kind_of(table: &toml::Table) -> Option<&str> {
    match table.get("model").and_then(|m| m.get("kind")) {
        None => Some("components"),
        Some(v) => v.as_str(),
    }
}

impl Chain<'_> {
    /// The table of `file` over its base; `dir` is the folder relative `extends`
    /// start from (canonical), `None` where only built-in bases may be named.
    fn merge(
        &mut self,
        file: &str,
        text: &str,
        dir: Option<Folder>,
    ) -> Result<toml::Table, ModelError> {
        if let Some(why) = spu_io::input::settings_too_large(text, "an energy model") {
            return Err(ModelError::Syntax {
                file: file.to_string(),
                why,
            });
        }
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ModelError::Syntax {
                file: file.to_string(),
                why: spu_io::quote::toml_message(e.to_string().trim_end()).replace('\n', "\n  "),
            })?;
        let extends_err = |why: String| ModelError::Key {
            file: file.to_string(),
            key: "model.extends".into(),
            why,
        };
        let base = match table.get("model").and_then(|m| m.get("extends")) {
            None => None,
            Some(v) => Some(
                v.as_str()
                    .ok_or_else(|| extends_err("must be a model name or a file path".into()))?,
            ),
        };
        let mut out = match base {
            None => toml::Table::new(),
            Some(base) => {
                let (base_file, base_text, base_dir, real) = self.base(base, dir, &extends_err)?;
                if let Some(at) = self.seen.iter().position(|s| s.is_some() && *s == real) {
                    return Err(extends_err(format!(
                        "the `extends` chain is a cycle: {} -> {base_file}; end it at a \
                         built-in model or a model without `extends`",
                        self.names[at..].join(" -> ")
                    )));
                }
                if self.names.len() > MAX_DEPTH {
                    return Err(extends_err(format!(
                        "the `extends` chain is too long: it may have at most {MAX_DEPTH} \
                         `extends`, and {} -> ... -> {} -> {base_file} has {}; merge some of \
                         its models into one file",
                        self.names[0],
                        file,
                        self.names.len()
                    )));
                }
                self.names.push(base_file.clone());
                self.seen.push(real);
                let out = self.merge(&base_file, &base_text, base_dir)?;
                // An instruction-classes model over a components model (or the
                // reverse) would mix sections neither kind has.
                if let (Some(own), Some(theirs)) = (
                    table
                        .get("model")
                        .and_then(|m| m.get("kind"))
                        .and_then(|k| k.as_str()),
                    kind_of(&out),
                ) && own != theirs
                    && KINDS.contains(&own)
                    && KINDS.contains(&theirs)
                {
                    return Err(ModelError::Key {
                        file: file.to_string(),
                        key: "model.kind".into(),
                        why: format!(
                            "{} model cannot extend {base_file}, {} model: a model may only \
                             extend one of its own kind",
                            with_article(own),
                            with_article(theirs)
                        ),
                    });
                }
                out
            }
        };
        for (section, value) in table {
            match (out.get_mut(&section), value) {
                (Some(toml::Value::Table(dst)), toml::Value::Table(src)) => {
                    for (k, v) in src {
                        self.origins
                            .keys
                            .insert(format!("{section}.{k}"), file.to_string());
                        dst.insert(k, v);
                    }
                }
                (_, value) => {
                    if let toml::Value::Table(t) = &value {
                        for k in t.keys() {
                            self.origins
                                .keys
                                .insert(format!("{section}.{k}"), file.to_string());
                        }
                    }
                    self.origins.keys.insert(section.clone(), file.to_string());
                    out.insert(section, value);
                }
            }
        }
        if let Some(toml::Value::Table(m)) = out.get_mut("model") {
            m.remove("extends");
        }
        Ok(out)
    }

    /// The model `base` names: (display name, text, its folder for the next
    /// `extends`, the file resolved).
    fn base(
        &mut self,
        base: &str,
        dir: Option<Folder>,
        extends_err: &dyn Fn(String) -> ModelError,
    ) -> Result<(String, String, Option<Folder>, Option<PathBuf>), ModelError> {
        if let Some(b) = built_in(base) {
            return Ok((
                format!("`{}` (built in)", b.name),
                b.toml.to_string(),
                None,
                None,
            ));
        }
        if !base.ends_with(".toml") {
            return Err(extends_err(format!(
                "`{}` is neither a built-in model nor a .toml file; extend one of {}",
                shorten(base),
                built_in_list()
            )));
        }
        let (Some(dir), Some(root)) = (dir, self.root) else {
            return Err(extends_err(format!(
                "`{}` is a file, but this model can only extend built-in models ({})",
                shorten(base),
                built_in_list()
            )));
        };
        let path = dir.shown.join(base);
        let outside = || {
            extends_err(format!(
                "`{}` is outside `{}`, the folder of the model named on the command line; an \
                 extended model must sit in that folder or below it (copy it there)",
                shorten(base),
                spu_io::quote::path(root)
            ))
        };
        // Confined as written before the file system is asked anything, so a path
        // outside the folder gets one answer whether or not a file is there.
        if !lexical(&dir.real.join(base)).starts_with(root) {
            return Err(outside());
        }
        let real = dir
            .real
            .join(base)
            .canonicalize()
            .map_err(|e| extends_err(format!("cannot open `{}`: {e}", shorten(base))))?;
        // And as resolved, links followed.
        if !real.starts_with(root) {
            return Err(outside());
        }
        // Checked on the opened file: nothing can be swapped in after the check.
        let bytes = spu_io::read_regular(&real, spu_io::MAX_INPUT_BYTES)
            .ok_or_else(|| {
                extends_err(format!(
                    "`{}` is not a regular file (a folder, pipe or device)",
                    shorten(base)
                ))
            })?
            .map_err(|e| extends_err(format!("cannot read `{}`: {}", shorten(base), e.reason())))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| extends_err(format!("`{}` is not UTF-8 text", shorten(base))))?;
        self.files.push(path.clone());
        let folder = Folder {
            real: real.parent().map(Path::to_path_buf).unwrap_or_default(),
            shown: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            model: None,
        };
        Ok((
            format!("`{}`", spu_io::quote::path(&path)),
            text,
            Some(folder),
            Some(real),
        ))
    }
}

/// `path` with `.` and `..` resolved as written (no link followed, nothing read).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
