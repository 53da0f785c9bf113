//! The results directory of a sweep: the plan (`plan.json`), a copy of the spec,
//! the provenance manifest, one record per finished run (`runs/ID.json`, written
//! atomically, so an interrupted sweep keeps every finished run), markers of runs in
//! progress (`running/ID`), and the reports (`results.csv`, `results.jsonl`, `plots/`).
//! Every file it writes is at most as readable as the sweep's inputs
//! ([`Plan::file_mode`]): a record may quote a kernel's lines. The folder holds only
//! its own files: each write replaces the name atomically (a symbolic link planted
//! there is replaced, never written through), a folder inside it that is a link is
//! refused, and a record that is a link or not a regular file is read as damaged.

use crate::json::to_json;
use crate::metrics::Metrics;
use crate::plan::{Plan, SOURCES, TOOL_VERSION, sha256_hex};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Done,
    Failed,
    /// The kernel refused its parameters (an `.assert` precondition failed): a
    /// finished run without results, not a fault; retrying cannot change it.
    Refused,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Refused => "refused",
        }
    }
}

/// The stored result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub status: Status,
    #[serde(default, deserialize_with = "unique_keys")]
    pub metrics: Metrics,
    /// Why a failed run failed (one line), then its details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub details: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub warnings: String,
    /// Wall time of the run and where it ran (provenance; not in the reports).
    pub wall_s: f64,
    pub host: String,
    pub tool_version: String,
}

/// Reads a record's metrics, refusing a key given twice (a JSON map keeps the
/// last without a word; a record the sweep wrote never repeats one).
fn unique_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
    struct Unique;
    impl<'de> serde::de::Visitor<'de> for Unique {
        type Value = Metrics;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of metrics")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Metrics, A::Error> {
            let mut metrics = Metrics::new();
            while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                if metrics.contains_key(&key) {
                    return Err(serde::de::Error::custom(format!(
                        "the metric `{}` is given twice",
                        spu_io::quote::shorten(&spu_io::quote::escape(&key))
                    )));
                }
                metrics.insert(key, value);
            }
            Ok(metrics)
        }
    }
    d.deserialize_map(Unique)
}

/// A run record that exists but cannot be read (cut short, edited, another
/// run's, a metric that should be a number holding something else): its run
/// counts as not run, and running the sweep again replaces it (unless it is a
/// folder, which is the user's to remove).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DamagedRecord {
    pub run: String,
    /// The record file, as messages name it.
    pub file: String,
    pub why: String,
    /// The record's name is a folder, which running again cannot replace.
    #[serde(skip)]
    pub folder: bool,
}

/// A results directory.
#[derive(Debug, Clone)]
pub struct Store {
    pub dir: PathBuf,
    /// Permission bits its files may have at most (owner only until the plan says).
    mode: u32,
}

/// Why a results directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("`{0}` exists and is not a sweep results folder (no plan.json); choose another --out")]
    NotASweep(String),
    #[error(
        "`{dir}` is not a sweep results folder: its plan.json is not a plan `spu-sweep run` wrote ({why}); choose another --out"
    )]
    NotAPlan { dir: String, why: String },
    #[error(
        "`{0}` is not a sweep results folder (no plan.json); give the folder `spu-sweep run` wrote"
    )]
    Missing(String),
    #[error("`{0}` does not exist; give the folder `spu-sweep run` wrote (its --out)")]
    NoFolder(String),
    #[error("cannot write `{path}`: {error}")]
    Write { path: String, error: std::io::Error },
    #[error("cannot read `{path}`: {why}")]
    Read { path: String, why: String },
    #[error(transparent)]
    Output(#[from] spu_io::output::OutputError),
    #[error(
        "`{0}` is a symbolic link; a results folder holds its own files and folders: remove it"
    )]
    LinkedFolder(String),
    #[error("`{0}` is not a folder; a results folder holds its own files and folders: remove it")]
    NotAFolder(String),
    /// The results folder path names an existing file; the text says which and
    /// what to give instead.
    #[error("{0}")]
    FileAsFolder(String),
    /// A file or folder inside a results folder, given where the folder is wanted.
    #[error(
        "`{inside}` is inside the results folder `{folder}`; give the folder itself: `{folder}`"
    )]
    InsideFolder { inside: String, folder: String },
}

/// The device and inode of an existing file, to compare paths spelled differently.
pub fn file_id(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Refuses a results folder path that names an existing file (the spec itself,
/// when `--out` repeats it), before anything is written. `out_given`: whether the
/// path came from `--out` (else from the spec's `name`).
pub fn refuse_file_as_folder(
    dir: &Path,
    out_given: bool,
    spec: &Path,
    name: &str,
) -> Result<(), StoreError> {
    if !dir.metadata().is_ok_and(|m| !m.is_dir()) {
        return Ok(());
    }
    let shown = spu_io::quote::path(dir);
    if !out_given {
        return Err(StoreError::FileAsFolder(format!(
            "the results folder `{shown}` (named after the spec's `name`) is an existing file; move the file away, or give the results another folder with `--out DIR`"
        )));
    }
    let is_spec = file_id(dir).is_some() && file_id(dir) == file_id(spec);
    let what = if is_spec { ", the spec itself" } else { "" };
    let fallback = format!("{name}.sweep");
    let instead = if dir == Path::new(&fallback) {
        "a folder that does not exist yet".to_string()
    } else {
        format!(
            "a folder that does not exist yet, e.g. `--out {}`, or leave `--out` out to use that one",
            spu_io::quote::shorten(&fallback)
        )
    };
    Err(StoreError::FileAsFolder(format!(
        "`--out {shown}` names an existing file{what}, not a results folder; give {instead}"
    )))
}

/// The folders of a results folder: each is the folder's own, never a link.
pub const FOLDERS: [&str; 5] = ["runs", "running", "plots", "tables", "slurm"];

/// Whether `path` (inside a results folder) is a folder of its own: `Ok(false)`
/// when nothing is there, an error when a link or something else is.
fn own_folder(path: &Path) -> Result<bool, StoreError> {
    match path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => {
            Err(StoreError::LinkedFolder(spu_io::quote::path(path)))
        }
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(StoreError::NotAFolder(spu_io::quote::path(path))),
        Err(_) => Ok(false),
    }
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Write {
        path: spu_io::quote::path(path),
        error,
    }
}

impl Store {
    /// Opens `dir` for a run: creates it, or reuses it if it holds a sweep (or nothing).
    pub fn create(dir: &Path) -> Result<Store, StoreError> {
        if dir.exists() {
            let empty = std::fs::read_dir(dir)
                .map_err(write_err(dir))?
                .next()
                .is_none();
            if !empty && !dir.join("plan.json").is_file() {
                return Err(StoreError::NotASweep(spu_io::quote::path(dir)));
            }
            let linked = dir
                .join("plan.json")
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            if !empty && !linked {
                // A plan of another format or a damaged one is planned again; a
                // file that is no plan at all is the user's, and so is the folder.
                // (A link planted as plan.json is replaced, never followed.)
                let probe = Store {
                    dir: dir.to_path_buf(),
                    mode: 0o600,
                };
                probe
                    .read_own("plan.json")
                    .and_then(|bytes| crate::plan::file::check_is_plan(&bytes))
                    .map_err(|why| StoreError::NotAPlan {
                        dir: spu_io::quote::path(dir),
                        why,
                    })?;
            }
        }
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
        let store = Store {
            dir: dir.to_path_buf(),
            mode: 0o600,
        };
        store.check_folders()?;
        store.own_dir(Path::new("runs"))?;
        store.own_dir(Path::new("running"))?;
        Ok(store)
    }

    /// Makes sure `rel` (a folder inside the results folder) is a folder of its
    /// own, creating what is missing: a link or a file there is refused, so no
    /// write can land outside the results folder.
    pub fn own_dir(&self, rel: &Path) -> Result<(), StoreError> {
        let mut d = self.dir.clone();
        for part in rel.components() {
            d.push(part);
            match own_folder(&d) {
                Ok(true) => {}
                Err(e) => return Err(e),
                Ok(false) => match std::fs::create_dir(&d) {
                    Ok(()) => {}
                    // Made meanwhile (another worker): checked again.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        if !d.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                            return Err(StoreError::LinkedFolder(spu_io::quote::path(&d)));
                        }
                    }
                    Err(e) => return Err(write_err(&d)(e)),
                },
            }
        }
        Ok(())
    }

    /// Refuses a results folder one of whose own folders ([`FOLDERS`]) is a link or
    /// not a folder, before a command reads anything through it; a missing one is
    /// made when something is written there.
    fn check_folders(&self) -> Result<(), StoreError> {
        for sub in FOLDERS {
            own_folder(&self.dir.join(sub))?;
        }
        Ok(())
    }

    /// The store writing files as readable as the plan's inputs allow.
    pub fn for_plan(mut self, plan: &Plan) -> Store {
        self.mode = plan.file_mode;
        self
    }

    /// Permission bits the store's files may have at most.
    pub fn mode(&self) -> u32 {
        self.mode
    }

    /// Opens an existing results directory.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        if !dir.join("plan.json").is_file() {
            // A file or folder of a results folder (its plan.json, say): name the folder.
            let folder = dir
                .exists()
                .then(|| dir.ancestors().skip(1))
                .into_iter()
                .flatten()
                .find_map(|a| {
                    let a = if a.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        a
                    };
                    a.join("plan.json").is_file().then_some(a)
                });
            if let Some(folder) = folder {
                return Err(StoreError::InsideFolder {
                    inside: spu_io::quote::path(dir),
                    folder: spu_io::quote::path(folder),
                });
            }
            if !dir.exists() {
                return Err(StoreError::NoFolder(spu_io::quote::path(dir)));
            }
            return Err(StoreError::Missing(spu_io::quote::path(dir)));
        }
        let store = Store {
            dir: dir.to_path_buf(),
            mode: 0o600,
        };
        store.check_folders()?;
        Ok(store)
    }

    /// Writes a file of the folder (`name` relative to it), replacing whatever has
    /// the name, a link included, without following it.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        if let Some(parent) = Path::new(name).parent() {
            self.own_dir(parent)?;
        }
        // The output error names the file itself.
        Ok(spu_io::output::replace_file(
            &self.dir.join(name),
            bytes,
            self.mode,
        )?)
    }

    /// Reads a JSON file of the folder.
    pub fn read_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Result<T, StoreError> {
        let path = self.dir.join(name);
        let err = |why: String| StoreError::Read {
            path: spu_io::quote::path(&path),
            why,
        };
        let bytes = self.read_own(name).map_err(err)?;
        serde_json::from_slice(&bytes).map_err(|e| err(format!("not a valid {name}: {e}")))
    }

    /// The bytes of a file of the folder (`name` relative to it), or why not: a
    /// link or anything but a regular file is not one the sweep wrote, and is not
    /// read (a pipe would wait for a writer).
    pub fn read_own(&self, name: &str) -> Result<Vec<u8>, String> {
        let path = self.dir.join(name);
        match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(
                    "it is a symbolic link; a results folder holds its own files: remove it".into(),
                );
            }
            Ok(m) if m.is_dir() => {
                return Err("it is a folder, not a file the sweep wrote".into());
            }
            Ok(m) if !m.is_file() => {
                return Err(
                    "it is not a regular file; a results folder holds its own files: remove it"
                        .into(),
                );
            }
            _ => {}
        }
        spu_isa::format::read_input(&path).map_err(|e| e.reason())
    }

    pub fn plan(&self) -> Result<Plan, StoreError> {
        let path = self.dir.join("plan.json");
        let err = |why: String| StoreError::Read {
            path: spu_io::quote::path(&path),
            why,
        };
        let bytes = self.read_own("plan.json").map_err(err)?;
        crate::plan::file::from_bytes(&bytes, "plan.json").map_err(err)
    }

    /// Writes the plan, a copy of the spec and the manifest.
    pub fn write_plan(&self, plan: &Plan, spec_text: &str) -> Result<(), StoreError> {
        self.write("spec.toml", spec_text.as_bytes())?;
        self.write("plan.json", &crate::plan::file::to_bytes(plan))?;
        self.write("manifest.json", &to_json(&manifest(plan)))
    }

    fn record_path(&self, id: &str) -> PathBuf {
        self.dir.join("runs").join(format!("{id}.json"))
    }

    /// The record of a run, if it finished (a damaged record counts as missing, so
    /// the run is done again; [`Store::scan`] reports it).
    pub fn record(&self, id: &str) -> Option<Record> {
        self.read_record(id).ok().flatten()
    }

    /// The record of a run: `None` when there is none, `Err` (why) when its file
    /// cannot be read or is not this run's record.
    pub fn read_record(&self, id: &str) -> Result<Option<Record>, String> {
        if self.record_path(id).symlink_metadata().is_err() {
            return Ok(None);
        }
        let bytes = self.read_own(&format!("runs/{id}.json"))?;
        let r = serde_json::from_slice::<Record>(&bytes)
            .map_err(|e| format!("it is not a run record: {e}"))?;
        if r.id != id {
            return Err(format!(
                "it holds the record of run `{}`",
                spu_io::quote::shorten(&r.id)
            ));
        }
        crate::metrics::Catalogue::shared().check_values(&r.metrics)?;
        Ok(Some(r))
    }

    /// Records of every run of the plan that has one.
    pub fn records(&self, plan: &Plan) -> HashMap<String, Record> {
        self.scan(plan).0
    }

    /// Records of every run of the plan that has one, and the record files that
    /// exist but cannot be read (their runs count as not run).
    pub fn scan(&self, plan: &Plan) -> (HashMap<String, Record>, Vec<DamagedRecord>) {
        let mut records = HashMap::new();
        let mut damaged = Vec::new();
        for id in plan.unique_ids() {
            match self.read_record(id) {
                Ok(Some(r)) => {
                    records.insert(id.to_string(), r);
                }
                Ok(None) => {}
                Err(why) => damaged.push(DamagedRecord {
                    run: id.to_string(),
                    file: spu_io::quote::path(&self.record_path(id)),
                    why,
                    folder: self
                        .record_path(id)
                        .symlink_metadata()
                        .is_ok_and(|m| m.is_dir()),
                }),
            }
        }
        (records, damaged)
    }

    pub fn write_record(&self, r: &Record) -> Result<(), StoreError> {
        self.write(&format!("runs/{}.json", r.id), &to_json(r))
    }

    /// Marks a run as in progress until the guard is dropped.
    pub fn mark_running(&self, id: &str) -> RunningMark {
        let path = self.dir.join("running").join(id);
        // A marker is advice for `status`: a folder that cannot hold it (refused
        // when the store was opened) costs only the advice.
        if self.own_dir(Path::new("running")).is_ok() {
            let text = format!("{} {}\n", host(), std::process::id());
            let _ = spu_io::output::replace_file(&path, text.as_bytes(), self.mode);
        }
        RunningMark { path }
    }

    /// Runs marked in progress: `(id, host, pid, alive)`; `alive` is false when the
    /// marking process is known to have died (same host, no such process).
    pub fn running(&self) -> Vec<(String, String, u32, bool)> {
        let running = self.dir.join("running");
        if !running.symlink_metadata().is_ok_and(|m| m.is_dir()) {
            return Vec::new();
        }
        let Ok(dir) = std::fs::read_dir(running) else {
            return Vec::new();
        };
        let here = host();
        let mut out: Vec<_> = dir
            .filter_map(|e| {
                let e = e.ok()?;
                // Only markers the sweep wrote: never a link, a pipe (which would
                // wait for a writer) or a large file.
                if !e.file_type().ok()?.is_file() {
                    return None;
                }
                let bytes = spu_io::read_limited(&e.path(), 4096).ok()?;
                let text = String::from_utf8(bytes).ok()?;
                let (h, pid) = text.trim().split_once(' ')?;
                let pid: u32 = pid.parse().ok()?;
                let alive = h != here || Path::new(&format!("/proc/{pid}")).exists();
                Some((
                    e.file_name().to_string_lossy().into_owned(),
                    h.to_string(),
                    pid,
                    alive,
                ))
            })
            .collect();
        out.sort();
        out
    }
}

/// Removes a run's in-progress marker when dropped.
#[derive(Debug)]
pub struct RunningMark {
    path: PathBuf,
}

impl Drop for RunningMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// This machine's host name.
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// Provenance: tool and format versions, the spec's hash, and per run the hashes
/// its identity is made of.
#[derive(Debug, Serialize)]
struct Manifest<'a> {
    tool: &'static str,
    tool_version: &'static str,
    /// Fingerprint of the simulator's sources.
    sources: &'static str,
    stats_version: u32,
    spec_file: &'a str,
    spec_sha256: &'a str,
    extras: &'a [String],
    planned_on: String,
    planned_at_unix_s: u64,
    runs: Vec<ManifestRun<'a>>,
}

#[derive(Debug, Serialize)]
struct ManifestRun<'a> {
    id: &'a str,
    kernel: String,
    kernel_sha256: &'a str,
    machine_sha256: String,
    defines: &'a [(String, String)],
    functional: bool,
    max_cycles: u64,
    spin_limit: u64,
    model: &'a str,
    model_sha256: &'a str,
}

fn manifest(plan: &Plan) -> Manifest<'_> {
    let mut seen = std::collections::HashSet::new();
    // Runs of one machine share it: hashed once.
    let mut machine_hashes = HashMap::new();
    let mut machine_hash = |m: &std::sync::Arc<[(String, String)]>| {
        machine_hashes
            .entry(m.as_ptr())
            .or_insert_with(|| sha256_hex(&serde_json::to_vec(&m[..]).unwrap_or_default()))
            .clone()
    };
    Manifest {
        tool: "spu-sweep",
        tool_version: TOOL_VERSION,
        sources: SOURCES,
        stats_version: spu_emu::observe::stats::STATS_VERSION,
        spec_file: &plan.spec_file,
        spec_sha256: &plan.spec_sha256,
        extras: &plan.extras,
        planned_on: host(),
        planned_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        runs: plan
            .runs
            .iter()
            .filter(|r| seen.insert(r.id.as_str()))
            .map(|r| ManifestRun {
                id: &r.id,
                kernel: r.kernel.display().to_string(),
                kernel_sha256: &r.kernel_sha256,
                machine_sha256: machine_hash(&r.machine),
                defines: &r.defines,
                functional: r.functional,
                max_cycles: r.max_cycles,
                spin_limit: r.spin_limit,
                model: &r.model,
                model_sha256: &r.model_sha256,
            })
            .collect(),
    }
}
