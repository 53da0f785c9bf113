//! Byte counts as the loader's messages print them: "1.5 GiB", "577 MiB",
//! "1.75 GiB" for a limit, and two amounts that would read the same with their
//! exact bytes.

/// A byte count in GiB, MiB or KiB.
pub(crate) fn size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else if bytes >= 1 << 20 {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    } else {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    }
}

/// A limit in GiB with as many decimals as it needs ("1.75 GiB"), or `size`'s
/// form when it is not a quarter of a GiB.
pub(crate) fn limit_size(bytes: u64) -> String {
    if bytes % (1 << 28) == 0 {
        format!("{} GiB", bytes as f64 / f64::from(1u32 << 30))
    } else {
        size(bytes)
    }
}

/// `size` of an amount and of the limit it is compared with, with the exact bytes
/// of both added when the two would read the same ("1.0 GiB" for a total just
/// above 1 GiB).
pub(crate) fn sizes_apart(bytes: u64, limit: u64) -> [String; 2] {
    let (a, b) = (size(bytes), size(limit));
    if a == b && bytes != limit {
        let exact = spu_io::numbers::grouped;
        [
            format!("{a} ({} bytes)", exact(bytes)),
            format!("{b} ({} bytes)", exact(limit)),
        ]
    } else {
        [a, b]
    }
}
