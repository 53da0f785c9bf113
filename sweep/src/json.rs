//! The form of every JSON file a sweep writes (the plan, run records, the
//! manifest, Slurm batches): pretty, with a final newline.

use serde::Serialize;

/// Pretty JSON with a final newline.
pub fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // Plain data with string keys: serialising cannot fail.
    let mut s = serde_json::to_vec_pretty(v).expect("serialises");
    s.push(b'\n');
    s
}
