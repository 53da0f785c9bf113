//! Typed machine parameter values: how a value is read from a machine file or from
//! `--set KEY=VALUE`, checked against its valid range, and printed back.

use std::fmt;

pub use spu_io::quote::shorten;

/// A raw value from a machine file or the command line, before typing.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    Int(i64),
    /// An integer written in full that does not fit in 64 signed bits, kept as
    /// written so messages show it exactly (as a float it would be rounded).
    BigInt(String),
    Float(f64),
    Text(String),
}

impl RawValue {
    /// Reads command-line text: an integer, a number, or else a word.
    pub fn from_text(text: &str) -> RawValue {
        let t = text.trim();
        let digits = t.replace('_', "");
        let unsigned = digits.strip_prefix(['-', '+']).unwrap_or(&digits);
        if let Ok(i) = digits.parse::<i64>() {
            RawValue::Int(i)
        } else if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
            RawValue::BigInt(digits.strip_prefix('+').unwrap_or(&digits).to_string())
        } else if let Ok(f) = digits.parse::<f64>() {
            RawValue::Float(f)
        } else {
            RawValue::Text(t.trim_matches('"').to_string())
        }
    }

    fn describe(&self) -> String {
        match self {
            RawValue::Int(i) => format!("the integer {i}"),
            RawValue::BigInt(i) => format!("the integer {}", shorten(i)),
            RawValue::Float(f) => format!("the number {f:?}"),
            RawValue::Text(s) => format!("the word `{}`", shorten(s)),
        }
    }
}

/// The valid values of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// An integer in `lo..=hi`.
    Int(i64, i64),
    /// A number in `lo..=hi`.
    Float(f64, f64),
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A power of two in `lo..=hi`.
    PowerOfTwo(i64, i64),
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Range::Int(lo, hi) => write!(f, "an integer in {lo}..={hi}"),
            Range::Float(lo, hi) => write!(f, "a number in {lo}..={hi}"),
            Range::PowerOfTwo(lo, hi) => write!(f, "a power of two in {lo}..={hi}"),
            Range::Choice(names) => {
                let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                write!(f, "one of {}", quoted.join(", "))
            }
        }
    }
}

/// A Rust type a parameter can have.
pub trait ParamType: Sized + Copy {
    /// Converts a raw value, or says why it is not valid (the caller adds the key).
    fn from_raw(raw: &RawValue, range: Range) -> Result<Self, String>;
    /// The value as JSON (for `--stats`) and as TOML-like text (for docs).
    fn to_json(self) -> serde_json::Value;
    fn to_text(self) -> String;
}

fn out_of_range(raw: &RawValue, range: Range) -> String {
    match (raw, range) {
        // A whole number too large for an integer (`99999999999999999999`) is read as
        // a float; it is out of range, not fractional.
        (RawValue::Float(f), Range::Int(lo, hi))
            if f.is_finite() && f.fract() == 0.0 && (*f > hi as f64 || *f < lo as f64) =>
        {
            format!("{} is out of range: expected {range}", raw.describe())
        }
        (RawValue::Float(_), Range::Int(..)) => format!(
            "{} is not an integer: expected {range} (write it without a decimal point)",
            raw.describe()
        ),
        (RawValue::BigInt(_), Range::Int(..) | Range::Float(..) | Range::PowerOfTwo(..)) => {
            format!("{} is out of range: expected {range}", raw.describe())
        }
        (RawValue::Int(_) | RawValue::Float(_), Range::Int(..) | Range::Float(..)) => {
            format!("{} is out of range: expected {range}", raw.describe())
        }
        // `line_bytes = 100`: name the powers of two on either side.
        (RawValue::Int(i), Range::PowerOfTwo(lo, hi)) if (lo..=hi).contains(i) => {
            let above = (*i as u64).next_power_of_two();
            format!(
                "{} is not a power of two: expected {range}, such as {} or {above}",
                raw.describe(),
                above / 2
            )
        }
        // `cols = "4"`: TOML reads a quoted number as a string.
        (RawValue::Text(t), Range::Int(..) | Range::Float(..) | Range::PowerOfTwo(..))
            if spu_io::quote::unquote_hint(t).is_some() =>
        {
            format!(
                "the quoted string `\"{}\"` is text, not a number: expected {range}; {}",
                shorten(t),
                spu_io::quote::unquote_hint(t).unwrap_or_default()
            )
        }
        _ => format!("{} is not valid: expected {range}", raw.describe()),
    }
}

impl ParamType for u32 {
    fn from_raw(raw: &RawValue, range: Range) -> Result<Self, String> {
        match (raw, range) {
            (RawValue::Int(i), Range::Int(lo, hi)) if (lo..=hi).contains(i) => Ok(*i as u32),
            (RawValue::Int(i), Range::PowerOfTwo(lo, hi))
                if (lo..=hi).contains(i) && (*i as u64).is_power_of_two() =>
            {
                Ok(*i as u32)
            }
            _ => Err(out_of_range(raw, range)),
        }
    }
    fn to_json(self) -> serde_json::Value {
        self.into()
    }
    fn to_text(self) -> String {
        self.to_string()
    }
}

impl ParamType for f64 {
    fn from_raw(raw: &RawValue, range: Range) -> Result<Self, String> {
        let v = match raw {
            RawValue::Int(i) => *i as f64,
            RawValue::Float(f) => *f,
            RawValue::BigInt(_) | RawValue::Text(_) => return Err(out_of_range(raw, range)),
        };
        match range {
            Range::Float(lo, hi) if v >= lo && v <= hi => Ok(v),
            _ => Err(out_of_range(raw, range)),
        }
    }
    fn to_json(self) -> serde_json::Value {
        self.into()
    }
    fn to_text(self) -> String {
        if self.fract() == 0.0 && self.abs() < 1e15 {
            format!("{self:.1}")
        } else {
            self.to_string()
        }
    }
}

/// Declares an enumeration whose values are words in machine files.
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// The spellings, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            /// The spelling of this value.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl $crate::param::ParamType for $name {
            fn from_raw(raw: &$crate::param::RawValue, range: $crate::param::Range) -> Result<Self, String> {
                match raw {
                    $($crate::param::RawValue::Text(t) if t == $text => Ok($name::$variant),)+
                    _ => Err(format!("{} is not valid: expected {range}", match raw {
                        $crate::param::RawValue::Text(t) => format!("`{}`", $crate::param::shorten(t)),
                        $crate::param::RawValue::Int(i) => i.to_string(),
                        $crate::param::RawValue::BigInt(i) => $crate::param::shorten(i).to_string(),
                        $crate::param::RawValue::Float(f) => format!("{f:?}"),
                    })),
                }
            }
            fn to_json(self) -> serde_json::Value {
                self.name().into()
            }
            fn to_text(self) -> String {
                format!("\"{}\"", self.name())
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use word_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_text_is_typed() {
        assert_eq!(RawValue::from_text("16"), RawValue::Int(16));
        assert_eq!(RawValue::from_text("1_000"), RawValue::Int(1000));
        assert_eq!(RawValue::from_text("88.7"), RawValue::Float(88.7));
        assert_eq!(RawValue::from_text("gto"), RawValue::Text("gto".into()));
        // Integers past 64 bits stay exact, for the message.
        let huge = RawValue::from_text("18446744073709551615");
        assert_eq!(huge, RawValue::BigInt("18446744073709551615".into()));
        let err = u32::from_raw(&huge, Range::Int(1, 8)).unwrap_err();
        assert_eq!(
            err,
            "the integer 18446744073709551615 is out of range: expected an integer in 1..=8"
        );
        assert_eq!(
            RawValue::from_text("-99999999999999999999"),
            RawValue::BigInt("-99999999999999999999".into())
        );
        assert!(f64::from_raw(&huge, Range::Float(0.5, 4.0)).is_err());
        assert_eq!(RawValue::from_text("1e30"), RawValue::Float(1e30));
    }

    #[test]
    fn ranges_are_enforced() {
        assert_eq!(u32::from_raw(&RawValue::Int(4), Range::Int(1, 8)), Ok(4));
        let err = u32::from_raw(&RawValue::Int(0), Range::Int(1, 8)).unwrap_err();
        assert!(err.contains("1..=8"), "{err}");
        assert!(u32::from_raw(&RawValue::Float(1.5), Range::Int(1, 8)).is_err());
        let pow = Range::PowerOfTwo(32, 512);
        assert_eq!(u32::from_raw(&RawValue::Int(64), pow), Ok(64));
        let err = u32::from_raw(&RawValue::Int(96), pow).unwrap_err();
        assert!(err.contains("a power of two in 32..=512"), "{err}");
        assert_eq!(
            u32::from_raw(&RawValue::Float(4.0), Range::Int(1, 8)),
            Err("the number 4.0 is not an integer: expected an integer in 1..=8 (write it without a decimal point)".into())
        );
        assert_eq!(
            u32::from_raw(&RawValue::Float(1e20), Range::Int(1, 8)),
            Err("the number 1e20 is out of range: expected an integer in 1..=8".into())
        );
        assert_eq!(
            f64::from_raw(&RawValue::Int(2), Range::Float(0.5, 4.0)),
            Ok(2.0)
        );
        assert!(f64::from_raw(&RawValue::Float(9.0), Range::Float(0.5, 4.0)).is_err());
        assert_eq!(
            u32::from_raw(&RawValue::Text("4".into()), Range::Int(1, 8)),
            Err("the quoted string `\"4\"` is text, not a number: expected an integer in 1..=8; remove the quotes: write `4`, not `\"4\"`".into())
        );
        let err = f64::from_raw(&RawValue::Text("1.5".into()), Range::Float(0.5, 4.0)).unwrap_err();
        assert!(err.contains("remove the quotes"), "{err}");
    }
}
