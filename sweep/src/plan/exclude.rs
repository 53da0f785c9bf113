//! Matching runs against the spec's `[[exclude]]` tables. Each exclusion is filed
//! under the values of one of its columns (the one whose values the fewest
//! exclusions name), and a run is checked only against the exclusions filed under
//! its own values: planning takes time in proportion to the runs and the
//! exclusions that could match them, not to runs times exclusions (10 000
//! exclusions of 100 000 runs took a minute).

use crate::spec::{Exclude, Field, Value};
use std::collections::HashMap;

/// The exclusions of a spec, indexed.
pub(super) struct Exclusions<'s> {
    /// `(column, value)` -> the exclusions filed under it, each once, in spec order.
    filed: HashMap<(&'s str, &'s str), Vec<usize>>,
    excludes: &'s [Exclude],
    /// An exclusion without conditions (refused while parsing) excludes every run.
    everything: bool,
}

impl<'s> Exclusions<'s> {
    pub fn new(excludes: &'s [Exclude]) -> Exclusions<'s> {
        let mut named: HashMap<(&str, &str), usize> = HashMap::new();
        for e in excludes {
            for (col, _, values) in &e.conditions {
                for v in values {
                    *named.entry((col.as_str(), v.text.as_str())).or_default() += 1;
                }
            }
        }
        let mut filed: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
        let mut everything = false;
        for (i, e) in excludes.iter().enumerate() {
            // A condition without values matches no run: so does its exclusion,
            // filed nowhere.
            let chosen = e.conditions.iter().min_by_key(|(col, _, values)| {
                values
                    .iter()
                    .map(|v| named[&(col.as_str(), v.text.as_str())])
                    .sum::<usize>()
            });
            let Some((col, _, values)) = chosen else {
                everything = true;
                continue;
            };
            for v in values {
                let list = filed.entry((col.as_str(), v.text.as_str())).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        Exclusions {
            filed,
            excludes,
            everything,
        }
    }

    /// Whether an exclusion leaves out the run at `point`: each of its columns has
    /// one of the values it lists.
    pub fn exclude(&self, point: &[(Field, Value)]) -> bool {
        if self.everything {
            return true;
        }
        if self.filed.is_empty() {
            return false;
        }
        let values = run_values(point);
        self.candidates(&values).any(|i| {
            self.excludes[i].conditions.iter().all(|(col, _, listed)| {
                values
                    .get(col.as_str())
                    .is_some_and(|v| listed.iter().any(|x| x.text == *v))
            })
        })
    }

    /// The exclusions filed under the run's values: the only ones that may match it.
    fn candidates<'a>(
        &'a self,
        values: &'a HashMap<String, &str>,
    ) -> impl Iterator<Item = usize> + 'a {
        values
            .iter()
            .filter_map(|(col, v)| self.filed.get(&(col.as_str(), *v)))
            .flatten()
            .copied()
    }
}

/// Each column's value in a run (its first, were a column set twice).
fn run_values(point: &[(Field, Value)]) -> HashMap<String, &str> {
    let mut values = HashMap::with_capacity(point.len());
    for (f, v) in point {
        values.entry(f.column()).or_insert(v.text.as_str());
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        Value {
            text: text.to_string(),
            span: 0..0,
        }
    }

    fn exclusion(conditions: &[(&str, &[&str])]) -> Exclude {
        Exclude {
            span: 0..0,
            conditions: conditions
                .iter()
                .map(|(c, vs)| (c.to_string(), 0..0, vs.iter().map(|v| value(v)).collect()))
                .collect(),
        }
    }

    fn point(values: &[(&str, &str)]) -> Vec<(Field, Value)> {
        values
            .iter()
            .map(|(c, v)| (Field::Label(c.to_string()), value(v)))
            .collect()
    }

    /// The definition: some exclusion whose every column has one of its values.
    fn excluded_by_definition(excludes: &[Exclude], point: &[(Field, Value)]) -> bool {
        excludes.iter().any(|e| {
            e.conditions.iter().all(|(col, _, values)| {
                point
                    .iter()
                    .find(|(f, _)| f.column() == *col)
                    .is_some_and(|(_, v)| values.iter().any(|x| x.text == v.text))
            })
        })
    }

    #[test]
    fn the_index_excludes_what_the_definition_does() {
        // Exclusions of three columns, a few values each (some that no run has,
        // some repeated, some conditions without values), from a fixed sequence.
        let mut seed = 0x2545_f491_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let cols = ["a", "b", "c"];
        let mut excludes = Vec::new();
        for _ in 0..40 {
            let mut conditions: Vec<(String, crate::diag::Span, Vec<Value>)> = Vec::new();
            for c in cols {
                // Mostly one to three values, now and then none.
                let n = if next(20) == 0 { 0 } else { 1 + next(3) };
                let values = (0..n).map(|_| value(&next(7).to_string())).collect();
                conditions.push((c.to_string(), 0..0, values));
            }
            excludes.push(Exclude {
                span: 0..0,
                conditions,
            });
        }
        let index = Exclusions::new(&excludes);
        let (mut kept, mut left) = (0, 0);
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let p = point(&[
                        ("a", &a.to_string()),
                        ("b", &b.to_string()),
                        ("c", &c.to_string()),
                    ]);
                    let by_definition = excluded_by_definition(&excludes, &p);
                    assert_eq!(index.exclude(&p), by_definition, "{a} {b} {c}");
                    if by_definition { left += 1 } else { kept += 1 }
                }
            }
        }
        assert!(kept > 0 && left > 0, "{kept} kept, {left} left out");
        // No conditions: every run; an empty value list: none.
        let all = [exclusion(&[])];
        assert!(Exclusions::new(&all).exclude(&point(&[("a", "1")])));
        let none = [exclusion(&[("a", &[]), ("b", &["1"])])];
        assert!(!Exclusions::new(&none).exclude(&point(&[("a", "1"), ("b", "1")])));
    }

    /// 10 000 exclusions each checked against each of 100 000 runs kept `plan`
    /// busy for a minute; a run is now checked against those filed under its values.
    #[test]
    fn a_run_is_checked_only_against_exclusions_naming_its_values() {
        let all: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let ys: Vec<String> = (0..10_000).map(|i| (1000 + i).to_string()).collect();
        let mut excludes: Vec<Exclude> = ys
            .iter()
            .map(|y| exclusion(&[("x", &all), ("y", &[y.as_str()])]))
            .collect();
        excludes.push(exclusion(&[("x", &["1"]), ("y", &["3"])]));
        let index = Exclusions::new(&excludes);
        let checked = |p: &[(&str, &str)]| {
            let p = point(p);
            let values = run_values(&p);
            (index.candidates(&values).count(), index.exclude(&p))
        };
        assert_eq!(checked(&[("x", "1"), ("y", "3")]), (1, true));
        assert_eq!(checked(&[("x", "2"), ("y", "3")]), (1, false));
        assert_eq!(checked(&[("x", "2"), ("y", "5")]), (0, false));
        assert_eq!(checked(&[("x", "4"), ("y", "1007")]), (1, true));
    }
}
