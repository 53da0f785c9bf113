//! Buffers in NumPy `.npy` files: little-endian, C order, dtype matching the
//! declaration (`.u8 .b8` -> `|u1`, `.s8` -> `|i1`, `.u16 .b16` -> `<u2`, `.s16` ->
//! `<i2`, `.u32 .b32` -> `<u4`, `.s32` -> `<i4`, `.f32` -> `<f4`, `.u64 .b64` ->
//! `<u8`, `.s64` -> `<i8`, `.f64` -> `<f8`; a type string with `=`, `|` or no
//! byte order, as NumPy reads it on a little-endian machine, counts as
//! little-endian), shape equal to the declared dimensions.
//! An input's header is parsed ([`super::npy_header`]) and checked against the
//! buffer before its body, and no more than the buffer's size is ever read; outputs
//! are streamed to a temporary file that is renamed into place.

use super::npy_header::{self, Descr};
use npyz::WriterBuilder;
use spu_isa::Ty;
use std::path::Path;

/// Why a `.npy` file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("cannot read `{path}`: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("`{path}` is not a valid .npy file: {why}")]
    Format { path: String, why: String },
    #[error(
        "`{path}` has dtype `{found}` but buffer `{buffer}` is .{ty}, which needs `{expected}`; {how}"
    )]
    Dtype {
        path: String,
        buffer: String,
        ty: Ty,
        found: String,
        expected: &'static str,
        /// The fix: convert the values, or (for a byte buffer the array's bytes
        /// fill) reinterpret them.
        how: String,
    },
    #[error(
        "`{path}` has shape {found} but buffer `{buffer}` is declared with shape {expected}; reshape it or change the kernel's parameters with -D"
    )]
    Shape {
        path: String,
        buffer: String,
        /// As [`shape_text`] writes it.
        found: String,
        expected: String,
    },
    #[error("`{path}` is in Fortran order; save it in C order (`np.ascontiguousarray(a)`)")]
    Order { path: String },
    /// The cause is the `source` (so that exit codes see a write Ctrl-C stopped);
    /// error reports print the chain.
    #[error("cannot write `{path}`")]
    Write {
        path: String,
        #[source]
        error: std::io::Error,
    },
    #[error(transparent)]
    Input(#[from] spu_io::InputError),
    /// An output that cannot be created (it names the file itself).
    #[error(transparent)]
    Output(#[from] spu_io::OutputError),
    #[error(
        "`{path}` is truncated: its header declares {elements} elements ({bytes} bytes of data) but the file ends before them"
    )]
    Truncated {
        path: String,
        elements: u64,
        bytes: u64,
    },
    #[error(
        "`{path}` has bytes after its data: its header declares {elements} elements, so expected {bytes} bytes of data, found {found}; save the array alone (`np.save`)"
    )]
    Trailing {
        path: String,
        elements: u64,
        bytes: u64,
        /// The data bytes present ("more" when the input is a pipe).
        found: String,
    },
}

/// The `.npy` magic string.
const MAGIC: &[u8] = b"\x93NUMPY";
/// Bytes of array data read or written at a time (a multiple of 8, so only the
/// last chunk of a buffer ends inside a word).
const CHUNK_BYTES: usize = 1 << 20;
/// Longest header accepted (NumPy writes a few hundred bytes).
const MAX_HEADER: usize = 1 << 16;

/// The `.npy` dtype of an element type.
pub fn dtype(ty: Ty) -> &'static str {
    match ty {
        Ty::U8 | Ty::B8 => "|u1",
        Ty::S8 => "|i1",
        Ty::U16 | Ty::B16 => "<u2",
        Ty::S16 => "<i2",
        Ty::U32 | Ty::B32 => "<u4",
        Ty::S32 => "<i4",
        Ty::F32 => "<f4",
        Ty::U64 | Ty::B64 => "<u8",
        Ty::S64 => "<i8",
        Ty::F64 => "<f8",
    }
}

/// A number's type string as NumPy reads it on a little-endian machine, spelled
/// as NumPy writes it: `=`, `|` or no byte-order character is the machine's
/// order, little-endian (`f4`, `=f4` and `|f4` are `<f4`), and a one-byte number
/// has none (`<u1` and `u1` are `|u1`). Other type strings are kept as they are.
fn spelled(t: &str) -> String {
    let (order, rest) = match t.as_bytes().first() {
        Some(b'<' | b'=' | b'|') => ('<', &t[1..]),
        Some(b'>') => ('>', &t[1..]),
        _ => ('<', t),
    };
    let mut chars = rest.chars();
    let number = matches!(chars.next(), Some('b' | 'i' | 'u' | 'f' | 'c'));
    let size = chars.as_str();
    if !number || size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
        t.to_string()
    } else if size == "1" {
        format!("|{rest}")
    } else {
        format!("{order}{rest}")
    }
}

/// A shape as a message shows it: `[64, 64]`, or for more than 8 dimensions (a
/// header may list thousands) the first 8 and their number.
fn shape_text(dims: &[u64]) -> String {
    const SHOWN: usize = 8;
    if dims.len() <= SHOWN {
        return format!("{dims:?}");
    }
    let start: Vec<String> = dims[..SHOWN].iter().map(u64::to_string).collect();
    format!("[{}, ...] ({} dimensions)", start.join(", "), dims.len())
}

/// Reads an array for buffer `buffer` of type `ty` and shape `dims`, as the words
/// the buffer's elements occupy (packed little-endian, the last word zero-padded).
pub fn read(path: &Path, buffer: &str, ty: Ty, dims: &[u64]) -> Result<Vec<u32>, NpyError> {
    let bytes = dims.iter().product::<u64>() * u64::from(ty.bytes());
    let mut words = vec![0u32; bytes.div_ceil(4) as usize];
    read_into(path, buffer, ty, dims, &mut words)?;
    Ok(words)
}

/// Reads an array as [`read`] does, straight into `words` (the buffer's own words,
/// `dims` x the element size in bytes, rounded up to words): the data is streamed
/// through a small chunk and never held twice. On an error `words` may hold part
/// of the data.
pub fn read_into(
    path: &Path,
    buffer: &str,
    ty: Ty,
    dims: &[u64],
    words: &mut [u32],
) -> Result<(), NpyError> {
    let p = spu_io::quote::path(path);
    let format = |why: String| NpyError::Format {
        path: p.clone(),
        why,
    };
    let (file, meta) = spu_io::open_input(path)?;
    let mut reader = std::io::BufReader::new(file);
    // The fixed prefix: magic, version, header length (u16 in version 1, else u32).
    let mut prefix = vec![0u8; 8];
    read_exact(&mut reader, &mut prefix, &p)?;
    if !prefix.starts_with(MAGIC) {
        return Err(format(
            "it does not start with the .npy magic `\\x93NUMPY`".into(),
        ));
    }
    // NumPy reads versions 1.0, 2.0 and 3.0 only.
    let len_bytes = match (prefix[6], prefix[7]) {
        (1, 0) => 2,
        (2 | 3, 0) => 4,
        (major, minor) => {
            return Err(format(format!(
                "its format version is {major}.{minor}; .npy files of versions 1.0, 2.0 and 3.0 are read (NumPy's `np.save` writes them)"
            )));
        }
    };
    let mut len = vec![0u8; len_bytes];
    read_exact(&mut reader, &mut len, &p)?;
    let header_len = len
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
    if header_len > MAX_HEADER {
        return Err(format(format!(
            "its header is {header_len} bytes (at most {MAX_HEADER})"
        )));
    }
    let prefix_len = prefix.len() + len.len();
    // The header itself, read here so a cut-short file says what is missing.
    let mut header = Vec::with_capacity(header_len);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut reader, header_len as u64),
        &mut header,
    )
    .map_err(|e| format(e.to_string()))?;
    if header.len() < header_len {
        return Err(format(format!(
            "its header is truncated: it declares {header_len} header bytes after the \
             {prefix_len}-byte prefix but the file ends after {} of them; save the array again \
             (`np.save`)",
            header.len()
        )));
    }
    let header = std::str::from_utf8(&header)
        .map_err(|e| {
            format(format!(
                "its header is not text (byte {} of the header)",
                e.valid_up_to()
            ))
        })
        .and_then(|text| npy_header::parse(text).map_err(format))?;
    let found = match &header.descr {
        Descr::Type(t) => spelled(t),
        Descr::Other(text) => text.clone(),
    };
    if found != dtype(ty) {
        let expected = dtype(ty);
        // A `.b8` buffer (clang's `__device__ float table[4]` is `.b8 table[16]`)
        // holds the bytes of an array of any number type of its size.
        let item = found
            .get(2..)
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|_| matches!(found.as_bytes().get(1), Some(b'b' | b'i' | b'u' | b'f')));
        let bytes = |shape: &[u64]| shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
        let same_bytes = item
            .zip(bytes(&header.shape))
            .and_then(|(i, n)| n.checked_mul(i))
            == bytes(dims);
        let how = if ty == Ty::B8 && same_bytes {
            format!(
                "the buffer holds the array's bytes: reinterpret them with `a.view('{expected}')`"
            )
        } else {
            format!("convert it with `a.astype('{expected}')`")
        };
        return Err(NpyError::Dtype {
            path: p,
            buffer: buffer.to_string(),
            ty,
            found: spu_io::quote::shorten(&found),
            expected,
            how,
        });
    }
    if header.shape != dims {
        return Err(NpyError::Shape {
            path: p,
            buffer: buffer.to_string(),
            found: shape_text(&header.shape),
            expected: shape_text(dims),
        });
    }
    if header.fortran_order && dims.len() > 1 {
        return Err(NpyError::Order { path: p });
    }
    let elements: u64 = dims.iter().product();
    let body = elements * u64::from(ty.bytes());
    let header_bytes = (prefix_len + header_len) as u64;
    let total = header_bytes + body;
    if meta.is_file() && meta.len() < total {
        return Err(NpyError::Truncated {
            path: p,
            elements,
            bytes: body,
        });
    }
    let trailing = |found: String| NpyError::Trailing {
        path: p.clone(),
        elements,
        bytes: body,
        found,
    };
    if meta.is_file() && meta.len() > total {
        return Err(trailing(format!("{}", meta.len() - header_bytes)));
    }
    // The elements, little-endian as the dtype check above ensured and packed as
    // the buffer packs them, so the file's bytes are the words' bytes: read in
    // chunks straight into the buffer's words, the last one zero-padded.
    debug_assert_eq!(words.len() as u64, body.div_ceil(4));
    let mut chunk = vec![0u8; CHUNK_BYTES];
    let mut next = 0usize;
    let mut left = body as usize;
    while left > 0 {
        let n = left.min(chunk.len());
        std::io::Read::read_exact(&mut reader, &mut chunk[..n]).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                NpyError::Truncated {
                    path: p.clone(),
                    elements,
                    bytes: body,
                }
            } else {
                NpyError::Read {
                    path: p.clone(),
                    error: e,
                }
            }
        })?;
        let whole = n / 4;
        for (word, bytes) in words[next..next + whole]
            .iter_mut()
            .zip(chunk[..4 * whole].chunks_exact(4))
        {
            *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
        next += whole;
        if n > 4 * whole {
            let mut last = [0u8; 4];
            last[..n - 4 * whole].copy_from_slice(&chunk[4 * whole..n]);
            words[next] = u32::from_le_bytes(last);
            next += 1;
        }
        left -= n;
    }
    // Nothing past the declared data is read but one byte, which must not be there.
    let mut extra = [0u8; 1];
    if std::io::Read::read(&mut reader, &mut extra).map_err(|error| NpyError::Read {
        path: p.clone(),
        error,
    })? > 0
    {
        return Err(trailing("more".into()));
    }
    Ok(())
}

fn read_exact(r: &mut impl std::io::Read, buf: &mut [u8], p: &str) -> Result<(), NpyError> {
    r.read_exact(buf).map_err(|e| NpyError::Format {
        path: p.to_string(),
        why: if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "it is too short to hold a .npy header".into()
        } else {
            e.to_string()
        },
    })
}

/// Encodes a buffer as `.npy` bytes.
pub fn encode(ty: Ty, dims: &[u64], words: &[u32]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_to(&mut out, ty, dims, words)?;
    Ok(out)
}

/// Writes a buffer as `.npy` to `out`: the header, then the words' bytes (the
/// buffer packs its elements little-endian, as the file does), a chunk at a time.
pub fn encode_to(
    mut out: impl std::io::Write,
    ty: Ty,
    dims: &[u64],
    words: &[u32],
) -> std::io::Result<()> {
    let type_str: npyz::TypeStr = dtype(ty).parse().map_err(std::io::Error::other)?;
    npyz::WriteOptions::new_header_only()
        .dtype(npyz::DType::Plain(type_str))
        .shape(dims)
        .writer(&mut out)
        .write_header_only()?;
    let body = dims.iter().product::<u64>() as usize * ty.bytes() as usize;
    let mut left = body;
    let mut chunk = Vec::with_capacity(CHUNK_BYTES);
    for part in words.chunks(CHUNK_BYTES / 4) {
        if left == 0 {
            break;
        }
        chunk.clear();
        for w in part {
            chunk.extend_from_slice(&w.to_le_bytes());
        }
        let n = chunk.len().min(left);
        out.write_all(&chunk[..n])?;
        left -= n;
    }
    if left > 0 {
        return Err(std::io::Error::other(format!(
            "the buffer holds fewer than its {body} bytes"
        )));
    }
    Ok(())
}

/// Writes a buffer to `path` atomically.
pub fn write(path: &Path, ty: Ty, dims: &[u64], words: &[u32]) -> Result<(), NpyError> {
    let p = spu_io::quote::path(path);
    let bytes = encode(ty, dims, words).map_err(|error| NpyError::Write {
        path: p.clone(),
        error,
    })?;
    crate::write_atomically(path, &bytes).map_err(|error| NpyError::Write { path: p, error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_checks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let words: Vec<u32> = (0..6).map(|i| (i as f32 * 0.5).to_bits()).collect();
        write(&path, Ty::F32, &[2, 3], &words).unwrap();
        assert_eq!(read(&path, "A", Ty::F32, &[2, 3]).unwrap(), words);
        let e = read(&path, "A", Ty::U32, &[2, 3]).unwrap_err().to_string();
        assert!(e.contains("`<f4`") && e.contains("`<u4`"), "{e}");
        let e = read(&path, "A", Ty::F32, &[3, 2]).unwrap_err().to_string();
        assert!(e.contains("[2, 3]") && e.contains("[3, 2]"), "{e}");
        std::fs::write(&path, b"not numpy").unwrap();
        assert!(matches!(
            read(&path, "A", Ty::F32, &[2, 3]),
            Err(NpyError::Format { .. })
        ));
    }

    #[test]
    fn every_element_type_round_trips_with_its_dtype() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        for ty in Ty::ALL.iter().copied() {
            // Five elements: the narrow types end inside a word.
            let mut words = vec![0u32; (5 * ty.bytes()).div_ceil(4) as usize];
            for i in 0..5 {
                let v = 0x8123_4567_89ab_cdefu64.rotate_left(8 * i as u32);
                let mask = u64::MAX >> (64 - ty.bits());
                crate::load::init::set_element(&mut words, ty, i, v & mask);
            }
            write(&path, ty, &[5], &words).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let header = String::from_utf8_lossy(&bytes[..bytes.len() - 5 * ty.bytes() as usize]);
            assert!(
                header.contains(&format!("'{}'", dtype(ty))),
                "{ty}: {header}"
            );
            assert_eq!(read(&path, "A", ty, &[5]).unwrap(), words, "{ty}");
        }
        write(&path, Ty::U8, &[5], &[0, 0]).unwrap();
        let e = read(&path, "A", Ty::S8, &[5]).unwrap_err().to_string();
        assert!(e.contains("`|u1`") && e.contains("`|i1`"), "{e}");
        let e = read(&path, "A", Ty::U16, &[5]).unwrap_err().to_string();
        assert!(e.contains("astype('<u2')"), "{e}");
        // A byte buffer the array's bytes fill (clang's `__device__ float t[4]`
        // is `.b8 t[16]`): reinterpreted, not converted.
        let floats: Vec<u32> = (0..4).map(|i| (i as f32).to_bits()).collect();
        write(&path, Ty::F32, &[4], &floats).unwrap();
        let e = read(&path, "T", Ty::B8, &[16]).unwrap_err().to_string();
        assert!(e.contains("reinterpret them with `a.view('|u1')`"), "{e}");
        let e = read(&path, "T", Ty::B8, &[12]).unwrap_err().to_string();
        assert!(e.contains("astype('|u1')"), "{e}");
    }

    /// The type strings NumPy reads as little-endian on a little-endian machine
    /// are read so; a big-endian one is refused.
    #[test]
    fn native_and_unordered_type_strings_read_as_numpy_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let words: Vec<u32> = (0..4).map(|i| (i as f32 + 0.5).to_bits()).collect();
        write(&path, Ty::F32, &[4], &words).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let newline = bytes.iter().position(|&b| b == b'\n').unwrap();
        let at = bytes.windows(5).position(|w| w == b"'<f4'").unwrap();
        for descr in ["'f4'", "'=f4'", "'|f4'", "\"<f4\""] {
            // The same header length: a space before its newline makes up the
            // difference of one.
            let mut edited = bytes[..at].to_vec();
            edited.extend_from_slice(descr.as_bytes());
            edited.extend_from_slice(&bytes[at + 5..newline]);
            match descr.len() {
                4 => edited.push(b' '),
                5 => {}
                _ => {
                    assert_eq!(edited.pop(), Some(b' '));
                }
            }
            edited.extend_from_slice(&bytes[newline..]);
            std::fs::write(&path, &edited).unwrap();
            assert_eq!(read(&path, "A", Ty::F32, &[4]).unwrap(), words, "{descr}");
        }
        // Big-endian data is refused, naming the type string.
        let mut edited = bytes.clone();
        edited[at + 1] = b'>';
        std::fs::write(&path, &edited).unwrap();
        let e = read(&path, "A", Ty::F32, &[4]).unwrap_err().to_string();
        assert!(e.contains("`>f4`"), "{e}");
        assert_eq!(spelled("<u1"), "|u1");
        assert_eq!(spelled("u1"), "|u1");
        assert_eq!(spelled("=i1"), "|i1");
        assert_eq!(spelled(">u1"), "|u1");
        assert_eq!(spelled(">f4"), ">f4");
        assert_eq!(spelled("i8"), "<i8");
        assert_eq!(spelled("|S10"), "|S10");
        assert_eq!(spelled("float32"), "float32");
    }

    /// Only the format versions NumPy reads, (1, 0), (2, 0) and (3, 0), are read; a
    /// file of another version, such as 1.1, is refused naming it.
    #[test]
    fn only_the_format_versions_numpy_reads_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let words: Vec<u32> = (0..4).collect();
        write(&path, Ty::U32, &[4], &words).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes[6..8], [1, 0]);
        for (major, minor) in [(1, 1), (2, 1), (0, 0), (4, 0), (1, 255)] {
            let mut edited = bytes.clone();
            edited[6..8].copy_from_slice(&[major, minor]);
            std::fs::write(&path, &edited).unwrap();
            let e = read(&path, "A", Ty::U32, &[4]).unwrap_err().to_string();
            let named = format!("format version is {major}.{minor};");
            assert!(e.contains(&named) && e.contains("1.0, 2.0 and 3.0"), "{e}");
        }
        // Version 2.0 and 3.0 headers have a 4-byte length: the same header
        // rewritten with one reads.
        let full = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
        let header = &bytes[10..10 + full];
        assert!(header.ends_with(b"  \n"));
        for major in [2, 3] {
            // Two bytes more of length, two spaces less of padding.
            let mut edited = MAGIC.to_vec();
            edited.extend_from_slice(&[major, 0]);
            edited.extend_from_slice(&(full as u32 - 2).to_le_bytes());
            edited.extend_from_slice(&header[..full - 3]);
            edited.push(b'\n');
            edited.extend_from_slice(&bytes[10 + full..]);
            std::fs::write(&path, &edited).unwrap();
            assert_eq!(read(&path, "A", Ty::U32, &[4]).unwrap(), words, "{major}");
        }
    }
}
