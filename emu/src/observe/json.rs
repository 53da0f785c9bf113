//! Reading back the JSON documents the tools write (`--stats`, `spu-prof --format
//! json` reports, a page's data block) in bounded memory: [`check`] walks the text
//! once without building anything (syntax, a key given twice in one object, a top
//! level that is not an object) and returns the top level's scalar values, so a
//! reader can tell what the document is before it deserializes it into its typed
//! structs, which refuse unknown keys where they meet them. Generic values inside
//! a document are read with [`scalar_map`] or [`bounded_value`], which cap what
//! they build.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fmt;

/// Why a text is not JSON a tool of this project wrote.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("is not JSON: {0}")]
    Syntax(serde_json::Error),
    #[error(
        "has the key `{key}` twice in one object (line {line}, column {column}); spu-emu and spu-prof write each key once, so the file was edited: write it again, or keep one of the two"
    )]
    Duplicate {
        key: String,
        line: usize,
        column: usize,
    },
    #[error(
        "is JSON whose top level is {found}, not an object (line {line}, column {column}); spu-emu and spu-prof write one object: give a file one of them wrote"
    )]
    NotAnObject {
        found: &'static str,
        line: usize,
        column: usize,
    },
}

impl JsonError {
    /// Where in the text the problem was found (1-based line and column).
    pub fn position(&self) -> (usize, usize) {
        match self {
            JsonError::Syntax(e) => (e.line(), e.column()),
            JsonError::Duplicate { line, column, .. }
            | JsonError::NotAnObject { line, column, .. } => (*line, *column),
        }
    }
}

/// A scalar value of the top-level object.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Text(String),
    /// A non-negative integer.
    Count(u64),
    /// Any other number, a boolean or null.
    Other,
    /// An array or an object (not kept).
    Nested,
}

/// The top-level object of a checked document: its keys in order, each with its
/// scalar value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Top {
    pub keys: Vec<(String, Scalar)>,
}

impl Top {
    pub fn get(&self, key: &str) -> Option<&Scalar> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// The text without a UTF-8 byte order mark at its start (some editors write one).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Checks `text` (a byte order mark at the start is skipped) and returns its top
/// level, building nothing but the set of keys of each object open at the time.
pub fn check(text: &str) -> Result<Top, JsonError> {
    let text = strip_bom(text);
    let problem = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let walked = de
        .deserialize_any(TopVisitor(&problem))
        .and_then(|top| de.end().map(|()| top));
    match (walked, problem.into_inner()) {
        (Ok(top), _) => Ok(top),
        (Err(e), Some(Problem::Twice(key))) => Err(JsonError::Duplicate {
            key: spu_io::quote::shorten(&key),
            line: e.line(),
            column: e.column(),
        }),
        (Err(e), Some(Problem::NotAnObject(found))) => Err(JsonError::NotAnObject {
            found,
            line: e.line(),
            column: e.column(),
        }),
        (Err(e), None) => Err(JsonError::Syntax(e)),
    }
}

enum Problem {
    Twice(String),
    NotAnObject(&'static str),
}

struct TopVisitor<'a>(&'a RefCell<Option<Problem>>);

impl TopVisitor<'_> {
    fn refuse<E: de::Error>(self, found: &'static str) -> Result<Top, E> {
        *self.0.borrow_mut() = Some(Problem::NotAnObject(found));
        Err(E::custom("the top level is not an object"))
    }
}

impl<'de> Visitor<'de> for TopVisitor<'_> {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Top, E> {
        self.refuse("a boolean")
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Top, E> {
        self.refuse("a number")
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Top, E> {
        self.refuse("a number")
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Top, E> {
        self.refuse("a number")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Top, E> {
        self.refuse("a string")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Top, E> {
        self.refuse("null")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Top, A::Error> {
        // Refused at its first byte: an array is never read through.
        self.refuse("an array")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top::default();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                *self.0.borrow_mut() = Some(Problem::Twice(key));
                return Err(de::Error::custom("a key given twice"));
            }
            let value = map.next_value_seed(TopValue(self.0))?;
            top.keys.push((key, value));
        }
        Ok(top)
    }
}

/// A value of the top level: scalars kept, anything nested walked through.
struct TopValue<'a>(&'a RefCell<Option<Problem>>);

impl<'de> DeserializeSeed<'de> for TopValue<'_> {
    type Value = Scalar;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopValue<'_> {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::Count(v))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Text(v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
        Skip(self.0).visit_seq(seq).map(|()| Scalar::Nested)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
        Skip(self.0).visit_map(map).map(|()| Scalar::Nested)
    }
}

/// Walks a value, keeping nothing but the keys of the objects it is inside.
#[derive(Clone, Copy)]
struct Skip<'a>(&'a RefCell<Option<Problem>>);

impl<'de> DeserializeSeed<'de> for Skip<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                *self.0.borrow_mut() = Some(Problem::Twice(key));
                return Err(de::Error::custom("a key given twice"));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// Deserializes a map of scalars (numbers, strings, booleans, null) and refuses an
/// array or object as a value where it starts, without reading it.
pub fn scalar_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, serde_json::Value>, D::Error> {
    struct Map;
    impl<'de> Visitor<'de> for Map {
        type Value = BTreeMap<String, serde_json::Value>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of numbers and words")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                let v = map.next_value_seed(ScalarValue)?;
                out.insert(key, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Map)
}

/// One scalar value; an array or object is refused at its first byte.
struct ScalarValue;

impl<'de> DeserializeSeed<'de> for ScalarValue {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarValue {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number or a word")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::invalid_type(de::Unexpected::Seq, &self))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
        Err(de::Error::invalid_type(de::Unexpected::Map, &self))
    }
}

/// At most this many values (each roughly 32 bytes; an object counts as many for
/// its node) are built by [`bounded_value`].
const VALUE_BUDGET: usize = 8 << 20;

/// Deserializes any JSON value, refusing one that would cost more than about
/// 256 MiB as a tree.
pub fn bounded_value<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    let spent = RefCell::new(0usize);
    d.deserialize_option(OptionalBounded(&spent))
}

struct OptionalBounded<'a>(&'a RefCell<usize>);

impl<'de> Visitor<'de> for OptionalBounded<'_> {
    type Value = Option<serde_json::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value or null")
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Bounded(self.0).deserialize(d).map(Some)
    }
}

/// Builds a value, counting what it builds against [`VALUE_BUDGET`].
#[derive(Clone, Copy)]
struct Bounded<'a>(&'a RefCell<usize>);

impl Bounded<'_> {
    fn spend<E: de::Error>(self, n: usize) -> Result<(), E> {
        let mut spent = self.0.borrow_mut();
        *spent += n;
        if *spent > VALUE_BUDGET {
            return Err(E::custom(format!(
                "it holds more than {VALUE_BUDGET} values, more than the tools write"
            )));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.spend(1)?;
        Ok(v.into())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.spend(1)?;
        Ok(v.into())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.spend(1)?;
        Ok(v.into())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.spend(1)?;
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.spend(1 + v.len() / 32)?;
        Ok(v.into())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.spend(1)?;
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        self.spend(1)?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(out.into())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // An object's first node holds room for several entries.
        self.spend(20)?;
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.spend(2 + key.len() / 32)?;
            let v = map.next_value_seed(self)?;
            out.insert(key, v);
        }
        Ok(out.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_at_the_top_is_refused_at_its_first_byte() {
        let bomb = format!("[{}]", vec![r#"{"a":0}"#; 100_000].join(","));
        let e = check(&bomb).unwrap_err();
        assert!(
            matches!(
                e,
                JsonError::NotAnObject {
                    found: "an array",
                    line: 1,
                    column: 1
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn top_level_scalars_are_kept_and_duplicates_refused_at_any_depth() {
        let top =
            check("\u{feff}{\"v\": 2, \"f\": \"x\", \"n\": [{\"a\": 1}], \"g\": -1}").unwrap();
        assert_eq!(top.get("v"), Some(&Scalar::Count(2)));
        assert_eq!(top.get("f"), Some(&Scalar::Text("x".into())));
        assert_eq!(top.get("n"), Some(&Scalar::Nested));
        assert_eq!(top.get("g"), Some(&Scalar::Other));
        let e = check("{\"n\": [{\"a\": 1, \"a\": 2}]}").unwrap_err();
        assert!(
            matches!(&e, JsonError::Duplicate { key, .. } if key == "a"),
            "{e}"
        );
    }

    #[test]
    fn a_bounded_value_stops_at_its_budget() {
        #[derive(serde::Deserialize)]
        struct S {
            #[serde(deserialize_with = "bounded_value")]
            v: Option<serde_json::Value>,
        }
        let small: S = serde_json::from_str(r#"{"v": {"a": [1, 2]}}"#).unwrap();
        assert_eq!(small.v, Some(serde_json::json!({"a": [1, 2]})));
        let n = VALUE_BUDGET / 20 + 1;
        let bomb = format!(r#"{{"v": [{}]}}"#, vec!["{}"; n].join(","));
        let e = serde_json::from_str::<S>(&bomb).err().unwrap().to_string();
        assert!(e.contains("more than the tools write"), "{e}");
    }
}
