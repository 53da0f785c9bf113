//! Buffers in NumPy `.npy` files: little-endian, C order, dtype matching the
//! declaration (`f32` -> `<f4`, `u32` -> `<u4`, `s32` -> `<i4`), shape equal to the
//! declared dimensions. Outputs are written through a temporary file and renamed.

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
        "`{path}` has dtype `{found}` but buffer `{buffer}` is .{ty}, which needs `{expected}`; convert it with `a.astype('{expected}')`"
    )]
    Dtype {
        path: String,
        buffer: String,
        ty: Ty,
        found: String,
        expected: &'static str,
    },
    #[error(
        "`{path}` has shape {found:?} but buffer `{buffer}` is declared with shape {expected:?}; reshape it or change the kernel's parameters with -D"
    )]
    Shape {
        path: String,
        buffer: String,
        found: Vec<u64>,
        expected: Vec<u64>,
    },
    #[error("`{path}` is in Fortran order; save it in C order (`np.ascontiguousarray(a)`)")]
    Order { path: String },
    #[error("cannot write `{path}`: {error}")]
    Write { path: String, error: std::io::Error },
}

/// The `.npy` dtype of an element type.
pub fn dtype(ty: Ty) -> &'static str {
    match ty {
        Ty::F32 => "<f4",
        Ty::S32 => "<i4",
        // The loader only admits 32-bit element types (see `load::check_word_types`).
        _ => "<u4",
    }
}

/// Reads an array for buffer `buffer` of type `ty` and shape `dims`, as bit patterns.
pub fn read(path: &Path, buffer: &str, ty: Ty, dims: &[u64]) -> Result<Vec<u32>, NpyError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| NpyError::Read {
        path: p.clone(),
        error,
    })?;
    let format = |e: std::io::Error| NpyError::Format {
        path: p.clone(),
        why: e.to_string(),
    };
    let file = npyz::NpyFile::new(&bytes[..]).map_err(format)?;
    let found = match file.dtype() {
        npyz::DType::Plain(t) => t.to_string(),
        other => other.descr(),
    };
    if found != dtype(ty) {
        return Err(NpyError::Dtype {
            path: p,
            buffer: buffer.to_string(),
            ty,
            found,
            expected: dtype(ty),
        });
    }
    if file.shape() != dims {
        return Err(NpyError::Shape {
            path: p,
            buffer: buffer.to_string(),
            found: file.shape().to_vec(),
            expected: dims.to_vec(),
        });
    }
    if file.order() == npyz::Order::Fortran && dims.len() > 1 {
        return Err(NpyError::Order { path: p });
    }
    let words = match ty {
        Ty::F32 => file
            .into_vec::<f32>()
            .map_err(format)?
            .into_iter()
            .map(f32::to_bits)
            .collect(),
        Ty::S32 => file
            .into_vec::<i32>()
            .map_err(format)?
            .into_iter()
            .map(|v| v as u32)
            .collect(),
        _ => file.into_vec::<u32>().map_err(format)?,
    };
    Ok(words)
}

/// Encodes a buffer as `.npy` bytes.
pub fn encode(ty: Ty, dims: &[u64], words: &[u32]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    match ty {
        Ty::F32 => {
            let mut w = npyz::WriteOptions::<f32>::new()
                .default_dtype()
                .shape(dims)
                .writer(&mut out)
                .begin_nd()?;
            w.extend(words.iter().map(|&b| f32::from_bits(b)))?;
            w.finish()?;
        }
        // The loader only admits 32-bit element types (see `load::check_word_types`).
        Ty::U32
        | Ty::B32
        | Ty::U64
        | Ty::S64
        | Ty::F64
        | Ty::U16
        | Ty::S16
        | Ty::U8
        | Ty::S8
        | Ty::B8
        | Ty::B16
        | Ty::B64 => {
            let mut w = npyz::WriteOptions::<u32>::new()
                .default_dtype()
                .shape(dims)
                .writer(&mut out)
                .begin_nd()?;
            w.extend(words.iter().copied())?;
            w.finish()?;
        }
        Ty::S32 => {
            let mut w = npyz::WriteOptions::<i32>::new()
                .default_dtype()
                .shape(dims)
                .writer(&mut out)
                .begin_nd()?;
            w.extend(words.iter().map(|&b| b as i32))?;
            w.finish()?;
        }
    }
    Ok(out)
}

/// Writes a buffer to `path` atomically.
pub fn write(path: &Path, ty: Ty, dims: &[u64], words: &[u32]) -> Result<(), NpyError> {
    let p = path.display().to_string();
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
}
