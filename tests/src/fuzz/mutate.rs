//! Structure-aware mutations for the fuzzers: edits confined to one section of a
//! valid binary (so the ELF container stays readable and the record parsers behind
//! it are reached), edits of a decoded module, and edits of a statistics file's JSON
//! tree (so the values, not the syntax, are what is hostile).

use arbitrary::{Result, Unstructured};
use object::read::elf::ElfFile64;
use object::{Object, ObjectSection};
use serde_json::Value;
use spu_isa::format::{BinOp, Expr, Module, Node};
use std::ops::Range;

/// Byte ranges of a binary's sections, by name.
pub fn sections(bin: &[u8]) -> Vec<(String, Range<usize>)> {
    let Ok(file) = ElfFile64::<object::Endianness>::parse(bin) else {
        return Vec::new();
    };
    file.sections()
        .filter_map(|s| {
            let (start, len) = s.file_range()?;
            let name = s.name().ok()?.to_string();
            let start = usize::try_from(start).ok()?;
            Some((name, start..start + usize::try_from(len).ok()?))
        })
        .filter(|(_, r)| !r.is_empty())
        .collect()
}

/// Values that sit on limits.
const INTERESTING_U32: [u32; 10] = [0, 1, 2, 4, 4096, 4097, 65535, 65536, 0x7fff_ffff, u32::MAX];

/// Edits up to eight places inside one section of `bin` (or its section headers).
pub fn mutate_section(u: &mut Unstructured, bin: &mut [u8]) -> Result<()> {
    let secs = sections(bin);
    if secs.is_empty() {
        return Ok(());
    }
    let (_, range) = u.choose(&secs)?.clone();
    for _ in 0..u.int_in_range(1..=8)? {
        let at = range.start + u.choose_index(range.len())?;
        match u.int_in_range(0..=3)? {
            0 => bin[at] ^= u.arbitrary::<u8>()?.max(1),
            1 => bin[at] = *u.choose(&[0u8, 1, 0x7f, 0x80, 0xff])?,
            _ => {
                // A length or count field: four bytes set to a limit value.
                let v = u.choose(&INTERESTING_U32)?.to_le_bytes();
                let end = (at + 4).min(range.end);
                bin[at..end].copy_from_slice(&v[..end - at]);
            }
        }
    }
    Ok(())
}

/// A random expression of up to `max` nodes over `params` parameters.
pub fn expr(u: &mut Unstructured, params: usize, max: usize) -> Result<Expr> {
    let n = u.int_in_range(1..=max)?;
    let mut nodes = Vec::with_capacity(n);
    let mut depth = 0usize;
    for _ in 0..n {
        let node = match u.int_in_range(0..=5)? {
            0 | 1 if depth >= 2 => Node::Binary(*u.choose(&BinOp::ALL)?),
            2 if depth >= 1 => Node::Neg,
            3 if params > 0 => Node::Param(u.int_in_range(0..=params as u16 - 1)?),
            _ => Node::Const(*u.choose(&[0i64, 1, 2, 7, 32, -1, i64::MIN, i64::MAX])?),
        };
        depth = depth + 1
            - match node {
                Node::Binary(_) => 2,
                Node::Neg => 1,
                _ => 0,
            };
        nodes.push(node);
    }
    while depth > 1 {
        nodes.push(Node::Binary(BinOp::Add));
        depth -= 1;
    }
    Ok(Expr::from_postfix(nodes).unwrap_or_default())
}

/// Changes a few fields of a decoded module.
pub fn mutate_module(u: &mut Unstructured, m: &mut Module) -> Result<()> {
    for _ in 0..u.int_in_range(1..=4)? {
        let params = m.params.len();
        match u.int_in_range(0..=9)? {
            0 => m.launch.grid[0] = expr(u, params, 6000)?,
            1 => {
                if let Some(b) = m.buffers.first_mut() {
                    b.dims = (0..u.int_in_range(0..=5)?)
                        .map(|_| expr(u, params, 40))
                        .collect::<Result<_>>()?;
                }
            }
            2 => m.name = "k".repeat(usize::from(u.arbitrary::<u16>()?) + 1),
            3 => {
                if let Some(l) = m.labels.first_mut() {
                    l.pc = u.arbitrary()?;
                }
            }
            4 => m.iu_entry = u.arbitrary()?,
            5 => {
                if let Some(r) = m.regs.first_mut() {
                    r.count = u.arbitrary()?;
                }
            }
            6 => {
                if let Some(f) = m.lines.files.first_mut() {
                    *f = "f".repeat(usize::from(u.arbitrary::<u16>()?) + 1);
                }
            }
            7 => {
                if let Some(l) = m.lines.locs.first_mut() {
                    l.file = u.arbitrary()?;
                }
            }
            8 => {
                let i = u.choose_index(m.code.len().max(1))?;
                if let Some(w) = m.code.get_mut(i) {
                    *w ^= 1u64 << u.int_in_range(0..=63)?;
                }
            }
            _ => {
                if let Some(p) = m.params.first_mut() {
                    p.default = u.arbitrary()?;
                }
            }
        }
    }
    Ok(())
}

/// Replaces, removes or multiplies a few values anywhere in a JSON tree.
pub fn mutate_json(u: &mut Unstructured, root: &mut Value) -> Result<()> {
    for _ in 0..u.int_in_range(1..=6)? {
        // A random path down the tree, as a JSON pointer.
        let mut pointer = String::new();
        let mut here = &*root;
        for _ in 0..u.int_in_range(0..=6)? {
            let step = match here {
                Value::Object(map) if !map.is_empty() => {
                    let key = u.choose(&map.keys().collect::<Vec<_>>())?.to_string();
                    let next = &map[&key];
                    Some((key.replace('~', "~0").replace('/', "~1"), next))
                }
                Value::Array(items) if !items.is_empty() => {
                    let i = u.choose_index(items.len())?;
                    Some((i.to_string(), &items[i]))
                }
                _ => None,
            };
            let Some((part, next)) = step else {
                break;
            };
            pointer.push('/');
            pointer.push_str(&part);
            here = next;
        }
        let Some(at) = root.pointer_mut(&pointer) else {
            continue;
        };
        match u.int_in_range(0..=9)? {
            0 => *at = Value::Null,
            1 => *at = Value::from(u.arbitrary::<u64>()?),
            2 => *at = Value::from(u.arbitrary::<i64>()?),
            3 => *at = Value::from(*u.choose(&[0.0, -1.0, 1e308, -1e308, 5e-324, 0.5])?),
            4 => *at = Value::from(*u.choose(&[0u64, 1, u64::MAX, u64::from(u32::MAX) + 1])?),
            5 => *at = Value::from("x".repeat(u.int_in_range(0..=300)?)),
            6 => {
                if let Value::Array(items) = at
                    && let Some(first) = items.first().cloned()
                {
                    let n = u.int_in_range(0..=2000)?;
                    items.extend(std::iter::repeat_n(first, n));
                }
            }
            7 => {
                if let Value::Object(map) = at {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    if !keys.is_empty() {
                        let k = u.choose(&keys)?.clone();
                        map.remove(&k);
                    }
                }
            }
            8 => {
                if let Value::Array(items) = at {
                    items.truncate(u.int_in_range(0..=items.len())?);
                }
            }
            _ => *at = Value::from(u.arbitrary::<bool>()?),
        }
    }
    Ok(())
}
