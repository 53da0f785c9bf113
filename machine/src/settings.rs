//! Setting a machine's parameters from text: machine files (TOML tables over the
//! defaults, errors naming the file and the key's line), `--set KEY=VALUE`,
//! `--grid PxQ`, and the advice for a key that does not exist.

use crate::param::{self, RawValue};
use crate::{Machine, MachineError, PARAMS};

pub(crate) fn unknown_key(key: &str) -> MachineError {
    // Keys are short; a long one is no typo of a key (and edit distances on megabytes
    // of text would take minutes).
    if key.len() > 64 {
        return MachineError::UnknownKey {
            key: param::shorten(key),
            hint: String::new(),
        };
    }
    if key == "extends" {
        return MachineError::UnknownKey {
            key: key.to_string(),
            hint: " (machine files do not extend presets: copy a preset's file from machine/machines/ and edit it)".to_string(),
        };
    }
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let best = PARAMS
        .iter()
        .map(|p| (spu_io::suggest::distance(key, p.key), p.key))
        .min()
        .filter(|(d, _)| *d <= 3)
        .map(|(_, k)| k)
        .or_else(|| {
            PARAMS
                .iter()
                .find(|p| p.key.rsplit('.').next() == Some(leaf))
                .map(|p| p.key)
        });
    MachineError::UnknownKey {
        key: param::shorten(key),
        hint: best.map_or_else(String::new, |k| format!(" (did you mean `{k}`?)")),
    }
}

impl Machine {
    /// Reads a machine file over the defaults. `file` names it in messages.
    pub fn from_toml(text: &str, file: &str) -> Result<Machine, MachineError> {
        if let Some(why) = spu_io::input::settings_too_large(text, "a machine file") {
            return Err(MachineError::Syntax {
                file: file.to_string(),
                why,
            });
        }
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| MachineError::Syntax {
                    file: file.to_string(),
                    why: spu_io::quote::toml_message(e.to_string().trim_end())
                        .replace('\n', "\n  "),
                })?;
        let mut machine = Machine::default();
        let mut leaves = Vec::new();
        // Errors name the file and the key's line, as TOML syntax errors do.
        let in_file = |key: &str, e: MachineError| MachineError::InFile {
            file: file.to_string(),
            line: key_line(text, key),
            inner: Box::new(e),
        };
        flatten("", &toml::Value::Table(table), &mut leaves)
            .map_err(|(key, e)| in_file(&key, e))?;
        for (key, raw) in leaves {
            machine.set_raw(&key, &raw).map_err(|e| in_file(&key, e))?;
        }
        Ok(machine)
    }

    /// Applies `KEY=VALUE` given with `--set`: errors say they come from `--set`.
    pub fn set_from_command_line(&mut self, assignment: &str) -> Result<(), MachineError> {
        self.set(assignment).map_err(|e| match e {
            MachineError::SetSyntax(_) => e,
            inner => MachineError::FromSet {
                assignment: param::shorten(assignment),
                inner: Box::new(inner),
            },
        })
    }

    /// Applies `KEY=VALUE` from the command line.
    pub fn set(&mut self, assignment: &str) -> Result<(), MachineError> {
        let (key, value) = assignment
            .split_once('=')
            .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
            .ok_or_else(|| MachineError::SetSyntax(param::shorten(assignment)))?;
        self.set_raw(key.trim(), &RawValue::from_text(value))
    }

    /// The current value of one key as machine-file text, if the key exists.
    pub fn value_text(&self, key: &str) -> Option<String> {
        self.entry_texts()
            .into_iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }

    /// Applies `--grid PxQ`.
    pub fn set_grid(&mut self, text: &str) -> Result<(), MachineError> {
        let err = || MachineError::GridSyntax(param::shorten(text));
        let (p, q) = text.split_once(['x', 'X']).ok_or_else(err)?;
        let p: i64 = p.trim().parse().map_err(|_| err())?;
        let q: i64 = q.trim().parse().map_err(|_| err())?;
        self.set_raw("grid.cols", &RawValue::Int(p))?;
        self.set_raw("grid.rows", &RawValue::Int(q))
    }
}

/// The leaves of a machine file's tables as `a.b = value`; an error comes with the
/// key it is about.
fn flatten(
    prefix: &str,
    value: &toml::Value,
    out: &mut Vec<(String, RawValue)>,
) -> Result<(), (String, MachineError)> {
    let raw = match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out)?;
            }
            return Ok(());
        }
        toml::Value::Integer(i) => RawValue::Int(*i),
        toml::Value::Float(f) => RawValue::Float(*f),
        toml::Value::String(s) => RawValue::Text(s.clone()),
        other => {
            let e = MachineError::BadValue {
                key: param::shorten(prefix),
                why: format!(
                    "{} is not valid here: machine values are numbers or words",
                    match other.type_str() {
                        "array" => "an array".to_string(),
                        kind => format!("a {kind}"),
                    }
                ),
            };
            return Err((prefix.to_string(), e));
        }
    };
    out.push((prefix.to_string(), raw));
    Ok(())
}

/// The line (from 1) of `key` (`a.b.c`) in a machine file's text, when the file
/// spells it as tables and bare or quoted keys without dots.
fn key_line(text: &str, key: &str) -> Option<usize> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut parts = key.split('.').peekable();
    while let Some(part) = parts.next() {
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == part)?;
        if parts.peek().is_none() {
            let at = k.span().start;
            return Some(text.get(..at)?.matches('\n').count() + 1);
        }
        table = v.get_ref().as_table()?;
    }
    None
}
