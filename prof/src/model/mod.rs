//! Energy models as data: TOML files (built in from `prof/models/`, or the user's)
//! with energy per counted event, leakage per unit and optional wire terms, or
//! per-instruction-class energies. Parsing checks every key and number and names
//! the file that set the key, the key and the problem; [`load`] reads the files
//! and follows `extends`.

mod load;

use load::Origins;
use spu_emu::observe::counters::Component;
use spu_io::quote::shorten;
use spu_isa::EnergyClass;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A built-in model: its name and file text.
#[derive(Debug, Clone, Copy)]
pub struct BuiltIn {
    pub name: &'static str,
    pub toml: &'static str,
}

/// Every built-in model, default first.
pub const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "default",
        toml: include_str!("../../models/default.toml"),
    },
    BuiltIn {
        name: "wires",
        toml: include_str!("../../models/wires.toml"),
    },
    BuiltIn {
        name: "cyclops64",
        toml: include_str!("../../models/cyclops64.toml"),
    },
];

/// What is wrong with a model file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("model {file}: {why}")]
    Syntax { file: String, why: String },
    #[error("model {file}, key `{key}`: {why}")]
    Key {
        file: String,
        key: String,
        why: String,
    },
    #[error("unknown model `{name}`; built-in models are {list}, or give a .toml file")]
    Unknown { name: String, list: String },
    #[error("cannot read model file `{file}`: {why}")]
    Io { file: String, why: String },
    #[error("model {file} has no `{key}`, but the machine has {what}; add it to the model")]
    MissingLeakage {
        file: String,
        key: String,
        what: String,
    },
}

/// Leakage per unit kind (watts); `None` where the model does not say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Leakage {
    pub sm: Option<f64>,
    pub iu: Option<f64>,
    pub dma: Option<f64>,
    pub cb_per_kib: Option<f64>,
    /// Per KiB of L1 data cache (every SM's).
    pub l1_per_kib: Option<f64>,
    /// Per KiB of L2 cache.
    pub l2_per_kib: Option<f64>,
    /// The network between the SMs and the L2 slices, and the slices' control
    /// logic: charged once when the machine has an L2.
    pub noc: Option<f64>,
    pub uncore: f64,
}

/// Wire energy from measured toggles (Adhinarayanan et al.).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wires {
    pub pj_per_bit_mm: f64,
    pub cb_link_mm: f64,
    /// On a 4x4 grid; scales with sqrt(SMs / 16).
    pub offchip_mm: f64,
}

/// How a model prices a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Counted events x energy per event, plus leakage per unit present.
    Components {
        leakage: Leakage,
        event_pj: BTreeMap<Component, f64>,
        /// Components priced per byte moved: `event_pj` is the energy of this many
        /// bytes, and an event costs it scaled by the bytes the machine's event
        /// moves ([`crate::energy::pj_per_event`]).
        event_bytes: BTreeMap<Component, f64>,
        wires: Option<Wires>,
    },
    /// Thread instructions per energy class x energy, plus a constant static power.
    InstructionClasses {
        static_w: f64,
        class_pj: BTreeMap<String, f64>,
        engine_load_pj: f64,
        engine_store_pj: f64,
    },
}

/// A loaded, validated model.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub name: String,
    pub description: String,
    pub sources: Vec<String>,
    /// Where it came from, for messages.
    pub file: String,
    pub kind: Kind,
    /// The files read from disk: the model file and those its `extends` chain
    /// names (none for a built-in model), so outputs can be refused on them.
    pub files: Vec<PathBuf>,
    /// Which file of the `extends` chain set each key.
    origins: Origins,
}

impl Model {
    /// The model without where it came from (its file, the files read, which
    /// file set each key): what prices a run, to tell whether two loads of a
    /// model price alike.
    pub fn pricing(&self) -> Model {
        Model {
            file: String::new(),
            files: Vec::new(),
            origins: Origins::default(),
            ..self.clone()
        }
    }

    /// A model from TOML text; `file` names it in messages. `extends` may only name
    /// built-in models here.
    pub fn from_text(text: &str, file: &str) -> Result<Model, ModelError> {
        let (table, origins) = load::merged(file, text, None)?;
        parse(&origins, &table, file)
    }

    /// A built-in model by name, or a model file (`.toml`) by path. A file's
    /// `extends` chain may name built-in models and files in the model file's
    /// folder or below it, nothing else.
    pub fn load(name_or_path: &str) -> Result<Model, ModelError> {
        let (file, text, root) = load::source(name_or_path)?;
        let mut files = Vec::new();
        if root.is_some() {
            files.push(PathBuf::from(name_or_path));
        }
        let confine = root.as_ref().map(|r| (r, &mut files));
        let (table, origins) = load::merged(&file, &text, confine)?;
        // Unnamed, a model file is called by its path as given.
        let mut model = parse(&origins, &table, &shorten(name_or_path))?;
        model.files = files;
        Ok(model)
    }

    /// The file (or built-in model) that set `key` (`section.key`), as messages
    /// name it: a key a model inherits is blamed on the model it comes from.
    pub fn file_of(&self, key: &str) -> &str {
        self.origins.of(key)
    }
}

/// An error at `key`, blamed on the file that set it.
fn key_err(file: &Origins, key: &str, why: impl Into<String>) -> ModelError {
    ModelError::Key {
        file: file.of(key).to_string(),
        key: shorten(key),
        why: why.into(),
    }
}

fn section<'a>(
    file: &Origins,
    t: &'a toml::Table,
    name: &str,
) -> Result<Option<&'a toml::Table>, ModelError> {
    match t.get(name) {
        None => Ok(None),
        Some(toml::Value::Table(s)) => Ok(Some(s)),
        Some(_) => Err(key_err(file, name, "must be a [section]")),
    }
}

fn energy(file: &Origins, key: &str, v: &toml::Value) -> Result<f64, ModelError> {
    let x = match v {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        _ => {
            // `IBP = "5"`: TOML reads a quoted number as a string.
            let hint = v
                .as_str()
                .and_then(spu_io::quote::unquote_hint)
                .map_or_else(String::new, |h| format!("; {h}"));
            return Err(key_err(
                file,
                key,
                format!("`{}` is not a number{hint}", shorten(&v.to_string())),
            ));
        }
    };
    if !x.is_finite() {
        return Err(key_err(
            file,
            key,
            format!("`{x}` is not a finite number; give an energy or power >= 0"),
        ));
    }
    if x < 0.0 {
        return Err(key_err(
            file,
            key,
            format!(
                "{} is negative: energies and powers must be >= 0",
                spu_io::numbers::short(x)
            ),
        ));
    }
    // `-0.0` passes the test above; every consumer sees it as the 0 it means, never
    // printed as `-0.00 W` or `-0.0` in a table.
    Ok(x + 0.0)
}

fn text(file: &Origins, t: &toml::Table, key: &str) -> Result<Option<String>, ModelError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(key_err(file, &format!("model.{key}"), "must be a string")),
    }
}

/// Parses a section of numbers whose keys must come from `names`; all are required.
fn numbers<'a>(
    file: &Origins,
    t: &toml::Table,
    sect: &str,
    names: impl Iterator<Item = &'a str> + Clone,
) -> Result<BTreeMap<String, f64>, ModelError> {
    let s = section(file, t, sect)?.ok_or_else(|| key_err(file, sect, "the section is missing"))?;
    let mut out = BTreeMap::new();
    for (k, v) in s {
        if !names.clone().any(|n| n == k) {
            let list: Vec<&str> = names.clone().collect();
            return Err(key_err(
                file,
                &format!("{sect}.{k}"),
                format!(
                    "unknown name `{}`; expected one of {}",
                    shorten(k),
                    list.join(", ")
                ),
            ));
        }
        out.insert(k.clone(), energy(file, &format!("{sect}.{k}"), v)?);
    }
    if let Some(missing) = names.clone().find(|n| !out.contains_key(*n)) {
        return Err(key_err(
            file,
            &format!("{sect}.{missing}"),
            "is missing; every entry needs an energy",
        ));
    }
    Ok(out)
}

fn only_keys(
    file: &Origins,
    t: &toml::Table,
    sect: &str,
    allowed: &[&str],
) -> Result<(), ModelError> {
    if let Some(s) = section(file, t, sect)? {
        for k in s.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(key_err(
                    file,
                    &format!("{sect}.{k}"),
                    format!("unknown key; expected one of {}", allowed.join(", ")),
                ));
            }
        }
    }
    Ok(())
}

/// The optional `[event_bytes]` section: components priced per byte, each with the
/// bytes its `event_pj` prices (a positive number).
fn event_bytes(file: &Origins, t: &toml::Table) -> Result<BTreeMap<Component, f64>, ModelError> {
    let Some(s) = section(file, t, "event_bytes")? else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    for (k, v) in s {
        let key = format!("event_bytes.{k}");
        let c = Component::ALL
            .iter()
            .find(|c| c.name() == k)
            .ok_or_else(|| {
                key_err(
                    file,
                    &key,
                    format!(
                        "unknown component `{}`; expected one of {}",
                        shorten(k),
                        Component::ALL
                            .iter()
                            .map(|c| c.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?;
        let bytes = energy(file, &key, v)?;
        if bytes == 0.0 {
            return Err(key_err(
                file,
                &key,
                "is 0; give the bytes the component's `event_pj` prices, e.g. 32",
            ));
        }
        out.insert(*c, bytes);
    }
    Ok(out)
}

/// `unnamed` names the model when its own file has no `model.name` (one its
/// `extends` chain set names the base, not this model).
fn parse(file: &Origins, t: &toml::Table, unnamed: &str) -> Result<Model, ModelError> {
    let m = section(file, t, "model")?
        .ok_or_else(|| key_err(file, "model", "the [model] section is missing"))?;
    only_keys(
        file,
        t,
        "model",
        &["name", "kind", "description", "sources", "extends"],
    )?;
    let name = text(file, m, "name")?
        .filter(|_| file.of("model.name") == file.top)
        .unwrap_or_else(|| unnamed.to_string());
    if name.trim().is_empty() {
        return Err(key_err(
            file,
            "model.name",
            "is empty; give the model a name (reports and comparisons show it), or leave the key out to use the file's name",
        ));
    }
    let description = text(file, m, "description")?.unwrap_or_default();
    let sources = match m.get("sources") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| key_err(file, "model.sources", "must be a list of strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(key_err(file, "model.sources", "must be a list of strings")),
    };
    let kind_name = text(file, m, "kind")?.unwrap_or_else(|| "components".into());
    let kind = match kind_name.as_str() {
        "components" => {
            for k in t.keys() {
                if !["model", "leakage_w", "event_pj", "event_bytes", "wires"].contains(&k.as_str())
                {
                    return Err(key_err(
                        file,
                        k,
                        "unknown section; a components model has [model], [leakage_w], [event_pj] and optionally [event_bytes] and [wires]",
                    ));
                }
            }
            only_keys(
                file,
                t,
                "leakage_w",
                &[
                    "sm",
                    "iu",
                    "dma",
                    "cb_per_kib",
                    "l1_per_kib",
                    "l2_per_kib",
                    "noc",
                    "uncore",
                ],
            )?;
            let leak = section(file, t, "leakage_w")?
                .ok_or_else(|| key_err(file, "leakage_w", "the section is missing"))?;
            let get = |k: &str| {
                leak.get(k)
                    .map(|v| energy(file, &format!("leakage_w.{k}"), v))
                    .transpose()
            };
            let leakage = Leakage {
                sm: get("sm")?,
                iu: get("iu")?,
                dma: get("dma")?,
                cb_per_kib: get("cb_per_kib")?,
                l1_per_kib: get("l1_per_kib")?,
                l2_per_kib: get("l2_per_kib")?,
                noc: get("noc")?,
                uncore: get("uncore")?.unwrap_or(0.0),
            };
            let by_name = numbers(file, t, "event_pj", Component::ALL.iter().map(|c| c.name()))?;
            let event_pj = Component::ALL
                .iter()
                .map(|c| (*c, by_name[c.name()]))
                .collect();
            let event_bytes = event_bytes(file, t)?;
            only_keys(
                file,
                t,
                "wires",
                &["pj_per_bit_mm", "cb_link_mm", "offchip_mm"],
            )?;
            let wires = match section(file, t, "wires")? {
                None => None,
                Some(w) => {
                    let need = |k: &str| -> Result<f64, ModelError> {
                        let v = w
                            .get(k)
                            .ok_or_else(|| key_err(file, &format!("wires.{k}"), "is missing"))?;
                        energy(file, &format!("wires.{k}"), v)
                    };
                    Some(Wires {
                        pj_per_bit_mm: need("pj_per_bit_mm")?,
                        cb_link_mm: need("cb_link_mm")?,
                        offchip_mm: need("offchip_mm")?,
                    })
                }
            };
            Kind::Components {
                leakage,
                event_pj,
                event_bytes,
                wires,
            }
        }
        "instruction-classes" => {
            for k in t.keys() {
                if !["model", "static_w", "class_pj", "engine_pj"].contains(&k.as_str()) {
                    return Err(key_err(
                        file,
                        k,
                        "unknown section; an instruction-classes model has [model], [static_w], [class_pj] and [engine_pj]",
                    ));
                }
            }
            let names: Vec<String> = EnergyClass::ALL.iter().map(|c| format!("{c:?}")).collect();
            let class_pj = numbers(file, t, "class_pj", names.iter().map(String::as_str))?;
            let static_w = numbers(file, t, "static_w", ["chip"].into_iter())?["chip"];
            let engine = numbers(file, t, "engine_pj", ["load", "store"].into_iter())?;
            Kind::InstructionClasses {
                static_w,
                class_pj,
                engine_load_pj: engine["load"],
                engine_store_pj: engine["store"],
            }
        }
        other => {
            return Err(key_err(
                file,
                "model.kind",
                format!(
                    "`{}` is not a model kind; expected `components` or `instruction-classes`",
                    shorten(other)
                ),
            ));
        }
    };
    Ok(Model {
        name,
        description,
        sources,
        file: file.top.clone(),
        kind,
        files: Vec::new(),
        origins: file.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_of_more_than_a_mebibyte_is_refused_before_parsing() {
        let keys: String = (0..100_000).map(|i| format!("K{i} = 1\n")).collect();
        let text = format!("[event_pj]\n{keys}");
        let e = Model::from_text(&text, "`m.toml`").unwrap_err().to_string();
        assert!(
            e.contains("`m.toml`") && e.contains("but an energy model is at most 1 048 576 bytes"),
            "{e}"
        );
    }

    #[test]
    fn built_in_models_load() {
        for b in BUILT_IN {
            let m = Model::load(b.name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.name, b.name);
        }
        let wires = Model::load("wires").unwrap();
        let Kind::Components {
            event_pj,
            wires: Some(_),
            ..
        } = wires.kind
        else {
            panic!("wires extends default and adds [wires]")
        };
        assert_eq!(event_pj[&Component::Nocp], 0.0);
        assert_eq!(event_pj[&Component::Dramp], 8000.0, "inherited");
    }

    #[test]
    fn a_negative_zero_is_read_as_zero() {
        let m = Model::from_text(
            "[model]\nkind = \"instruction-classes\"\nextends = \"cyclops64\"\n\
             [static_w]\nchip = -0.0\n",
            "t.toml",
        )
        .unwrap();
        let Kind::InstructionClasses { static_w, .. } = m.kind else {
            panic!("an instruction-classes model")
        };
        assert!(static_w == 0.0 && static_w.is_sign_positive(), "{static_w}");
    }

    #[test]
    fn an_empty_name_is_refused() {
        for name in ["", "  "] {
            let text = format!("[model]\nname = \"{name}\"\nextends = \"cyclops64\"\n");
            let err = Model::from_text(&text, "t.toml").unwrap_err().to_string();
            assert!(
                err.contains("model.name") && err.contains("is empty"),
                "{err}"
            );
        }
    }
}
