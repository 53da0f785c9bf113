//! Reading model files and following `extends`. The model named on the command
//! line may be any `.toml` file; every file its `extends` chain names must be a
//! regular file that resolves (after following links) inside that model's folder,
//! as `#include`d kernel files must, and is read through the one bounded reader. A
//! model from an untrusted source can therefore neither quote files elsewhere on
//! the machine nor hang the profiler on a pipe. Every key remembers the file that
//! set it, so a problem in an extended file is blamed on that file.

use super::{BUILT_IN, BuiltIn, ModelError};
use spu_io::quote::shorten;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Deepest `extends` chain (a longer one is almost surely a cycle).
const MAX_DEPTH: u32 = 8;

/// Which file set each key of a merged model.
#[derive(Debug, Clone, Default)]
pub(super) struct Origins {
    /// The model as named (its file, or the built-in name): blamed for problems of
    /// the whole model.
    pub top: String,
    /// `section` and `section.key` -> the file that set it.
    keys: HashMap<String, String>,
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
    let io = |why: String| ModelError::Io {
        file: shorten(name_or_path),
        why,
    };
    let path = Path::new(name_or_path);
    let text = spu_io::read_text(path).map_err(|e| io(e.reason()))?;
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
    };
    Ok((format!("`{}`", shorten(name_or_path)), text, Some(folder)))
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
        keys: HashMap::new(),
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
    };
    let table = chain.merge(file, text, root.cloned(), 0)?;
    Ok((table, origins))
}

struct Chain<'a> {
    root: Option<&'a Path>,
    files: &'a mut Vec<PathBuf>,
    origins: &'a mut Origins,
}

impl Chain<'_> {
    /// The table of `file` over its base; `dir` is the folder relative `extends`
    /// start from (canonical), `None` where only built-in bases may be named.
    fn merge(
        &mut self,
        file: &str,
        text: &str,
        dir: Option<Folder>,
        depth: u32,
    ) -> Result<toml::Table, ModelError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ModelError::Syntax {
                file: file.to_string(),
                why: spu_io::quote::shorten_lines(e.to_string().trim_end()).replace('\n', "\n  "),
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
            Some(_) if depth >= MAX_DEPTH => {
                return Err(extends_err("extends chain is too deep (a cycle?)".into()));
            }
            Some(base) => {
                let (base_file, base_text, base_dir) = self.base(base, dir, &extends_err)?;
                self.merge(&base_file, &base_text, base_dir, depth + 1)?
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
    /// `extends`).
    fn base(
        &mut self,
        base: &str,
        dir: Option<Folder>,
        extends_err: &dyn Fn(String) -> ModelError,
    ) -> Result<(String, String, Option<Folder>), ModelError> {
        if let Some(b) = built_in(base) {
            return Ok((format!("`{}` (built in)", b.name), b.toml.to_string(), None));
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
        let real = dir
            .real
            .join(base)
            .canonicalize()
            .map_err(|e| extends_err(format!("cannot open `{}`: {e}", shorten(base))))?;
        if !real.starts_with(root) {
            return Err(extends_err(format!(
                "`{}` is outside `{}`, the folder of the model named on the command line; an \
                 extended model must sit in that folder or below it (copy it there)",
                shorten(base),
                root.display()
            )));
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
        };
        Ok((format!("`{}`", path.display()), text, Some(folder)))
    }
}
