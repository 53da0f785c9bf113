//! Little-endian record encoding of the metadata sections: a writer, and a reader
//! whose every read is bounds-checked and returns a typed error.

use crate::format::{BinOp, Expr, FormatError, Node};

/// Most nodes one stored expression may have.
pub const MAX_EXPR_NODES: u32 = 4096;
/// Longest stored string.
pub const MAX_STRING: u32 = 1 << 16;

#[derive(Debug, Default)]
pub(crate) struct ByteWriter {
    pub bytes: Vec<u8>,
}

impl ByteWriter {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    pub fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    pub fn str(&mut self, s: &str) {
        self.len(s.len());
        self.bytes.extend_from_slice(s.as_bytes());
    }
    pub fn expr(&mut self, e: &Expr) {
        self.len(e.node_count());
        for node in e.nodes() {
            match *node {
                Node::Const(v) => {
                    self.u8(0);
                    self.u64(v as u64);
                }
                Node::Param(i) => {
                    self.u8(1);
                    self.u16(i);
                }
                Node::Neg => self.u8(2),
                Node::Binary(op) => self.u8(3 + binop_code(op)),
            }
        }
    }
}

const BINOPS: [BinOp; 8] = BinOp::ALL;

fn binop_code(op: BinOp) -> u8 {
    BINOPS.iter().position(|o| *o == op).unwrap_or(0) as u8
}

#[derive(Debug)]
pub(crate) struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
    section: &'static str,
}

impl<'a> ByteReader<'a> {
    pub fn new(section: &'static str, data: &'a [u8]) -> Self {
        ByteReader {
            data,
            pos: 0,
            section,
        }
    }

    pub fn corrupt(&self, what: impl Into<String>) -> FormatError {
        FormatError::Corrupt {
            section: self.section,
            offset: self.pos,
            what: what.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.data.len());
        match end {
            Some(end) => {
                let s = &self.data[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(FormatError::Truncated {
                section: self.section,
                offset: self.pos,
            }),
        }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, FormatError> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    pub fn u32(&mut self) -> Result<u32, FormatError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, FormatError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn f64(&mut self) -> Result<f64, FormatError> {
        Ok(f64::from_bits(self.u64()?))
    }
    pub fn bool(&mut self) -> Result<bool, FormatError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.corrupt(format!("flag byte {v} is neither 0 nor 1"))),
        }
    }

    /// A count of items that each take at least `min_item_bytes`; refuses counts the
    /// remaining data cannot hold, so a corrupt count cannot trigger a huge allocation.
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize, FormatError> {
        let n = self.u32()? as usize;
        let left = self.data.len() - self.pos;
        if n.saturating_mul(min_item_bytes.max(1)) > left {
            return Err(self.corrupt(format!(
                "count {n} exceeds the section's remaining {left} bytes"
            )));
        }
        Ok(n)
    }

    pub fn str(&mut self) -> Result<String, FormatError> {
        let n = self.u32()?;
        if n > MAX_STRING {
            return Err(self.corrupt(format!("string length {n} exceeds {MAX_STRING}")));
        }
        let bytes = self.take(n as usize)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| self.corrupt("string is not UTF-8"))
    }

    pub fn expr(&mut self, params: usize) -> Result<Expr, FormatError> {
        let n = self.u32()?;
        if n == 0 || n > MAX_EXPR_NODES {
            return Err(self.corrupt(format!("expression with {n} nodes (1..={MAX_EXPR_NODES})")));
        }
        let mut nodes = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let tag = self.u8()?;
            nodes.push(match tag {
                0 => Node::Const(self.u64()? as i64),
                1 => {
                    let i = self.u16()?;
                    if usize::from(i) >= params {
                        return Err(
                            self.corrupt(format!("expression names parameter #{i} of {params}"))
                        );
                    }
                    Node::Param(i)
                }
                2 => Node::Neg,
                3..=10 => Node::Binary(BINOPS[usize::from(tag - 3)]),
                t => return Err(self.corrupt(format!("unknown expression node {t}"))),
            });
        }
        Expr::from_postfix(nodes).map_err(|_| self.corrupt("malformed expression"))
    }

    pub fn finish(&self) -> Result<(), FormatError> {
        if self.pos == self.data.len() {
            Ok(())
        } else {
            Err(self.corrupt(format!("{} trailing bytes", self.data.len() - self.pos)))
        }
    }
}
