//! Checkpoint files of a replay in progress (issue 15): the complete state
//! of a run (FTL, statistics, the placement policy with its models,
//! samplers and RNGs, the victim selector, the annotated future's cursor,
//! the position in the request stream) written atomically, so that a killed
//! multi-hour replay resumes to exactly the result the uninterrupted run
//! gives.
//!
//! # Layout (format 2)
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `WAFERCKP` |
//! | 4 | format (u32 LE, [`FORMAT`]) |
//! | 8 | body length [bytes] (u64 LE) |
//! | 8 | xxh3-64 of the body (u64 LE) |
//! | rest | the body: bincode ([`crate::codec`]) of the wafer version that wrote it, the run's configuration as given (JSON), the [`Position`] and the engine's state |
//!
//! A file is trusted only step by step (issue 42): its fixed header is read
//! first, and the body is read only once the magic, the format and the
//! length (against the file's size) check out, so a foreign or huge file is
//! never read whole; the body's checksum is verified before anything in it
//! is decoded, so a flipped bit or a torn copy is refused instead of
//! decoding to a different state (or a panic). What the body says is then
//! checked against what it describes: the run rebuilt from the stored
//! configuration must have the policy, victim selector, seed, device,
//! setup and timing options the state was saved under ([`Position::binding`]),
//! and a trace must be the one the saved position was read from
//! ([`TraceMark`]: its size, its detected format and a digest of every
//! request applied before the checkpoint).
//!
//! The request stream itself is not stored: on resume the source is opened
//! again from the configuration and the requests already applied are read
//! past, which leaves a trace reader or a generator exactly where it was
//! (with the same statistics of what it read); annotations are re-derived
//! the same way (cached for traces). A learned policy whose training runs
//! on a thread is checkpointed between trainings: the simulation waits for
//! the next request boundary at which no training is in flight. Timing mode
//! cannot be checkpointed (its event queue is not serialisable); asking for
//! it is an error before the run.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use super::{RunConfig, RunResult};
use crate::codec::{decode, encode};
use crate::engine::EngineState;
use crate::error::{Error, Result};
use crate::request::Request;

/// First bytes of every checkpoint file.
pub const MAGIC: &[u8; 8] = b"WAFERCKP";
/// Version of the layout after the magic; a file of another version is
/// refused with a clear error. Format 2 (issue 42) added the body's length
/// and checksum and the binding of the configuration to the state; format 3
/// the statistics' per-group windows; format 4 MiDAS's configuration
/// timing (its GB count and a configuration waiting for the next GB).
pub const FORMAT: u32 = 4;
/// Bytes before the body: magic, format, body length, checksum.
pub const HEADER_BYTES: usize = 8 + 4 + 8 + 8;

/// Names the checkpoint file `path` in a checkpoint error raised below the
/// file level (whose file is `<state>`); other errors pass unchanged.
pub fn in_file(path: &Path) -> impl Fn(Error) -> Error + '_ {
    move |e| match e {
        Error::Checkpoint { reason, .. } => Error::Checkpoint {
            file: path.display().to_string(),
            reason,
        },
        e => e,
    }
}

/// A checkpoint error about the file at `path`.
fn refused(path: &Path, reason: impl Into<String>) -> Error {
    Error::Checkpoint {
        file: path.display().to_string(),
        reason: reason.into(),
    }
}

/// The temporary file [`write_atomic`] writes before renaming it over
/// `path`: `.NAME.tmp-PID` in the same directory (same file system, so the
/// rename is atomic; the PID tells whose it is, see [`remove_stale_temps`]).
fn temp_path(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| refused(path, "not a file name"))?;
    Ok(dir_of(path).join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    )))
}

/// The directory holding `path` (`.` for a bare file name).
fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => ".".into(),
    }
}

/// Write `bytes` to `path` atomically: a temporary file in the same
/// directory, flushed to disk, then renamed over `path` (a kill at any
/// point leaves the previous checkpoint or the new one, never a torn file;
/// a kill before the rename leaves the temporary file, which the next run
/// checkpointing to `path` removes, [`remove_stale_temps`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes to the temporary file (a
/// state streamed as it is encoded, never whole in memory).
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let err = |e: std::io::Error| refused(path, format!("cannot write: {e}"));
    let dir = dir_of(path);
    let tmp = temp_path(path)?;
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        // A full disk or a vanished folder: leave no partial file behind.
        let _ = fs::remove_file(&tmp);
        return Err(err(e));
    }
    // The rename itself reaches the disk with the directory's entry.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Whether process `pid` is alive, or may be: where `/proc` does not
/// list processes (not Linux), every process counts as alive, so nothing
/// is removed (`/proc` rather than `kill(pid, 0)` keeps the crate free of
/// `unsafe`). A PID reused by an unrelated process keeps a stale file until
/// that process ends: harmless.
fn alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

/// Remove the temporary files a killed writer of checkpoint `path` left
/// beside it (`.NAME.tmp-PID` whose process is gone; this process's own
/// and a live process's are kept, since they may be mid-write). Returns the
/// files removed. Called when a run checkpointing to `path` starts or
/// resumes (issue 42), so a kill during a write costs no disk space for
/// good; a directory that cannot be listed removes nothing.
pub fn remove_stale_temps(path: &Path) -> Vec<PathBuf> {
    let Some(name) = path.file_name() else {
        return Vec::new();
    };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir_of(path)) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && fs::remove_file(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}

/// A running digest of the requests a trace replay applied (issue 42): on
/// resume the same number of requests is read again and must give the same
/// digest, so a trace edited since the checkpoint (even keeping its size)
/// is refused instead of resuming to a different result. Each request (its
/// time, block address, length, kind and device, after the reader's
/// selection and remapping) is hashed with xxh3 seeded by the digest so
/// far: order matters, and it costs a few nanoseconds per request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest(pub u64);

impl Digest {
    /// Fold request `r` into the digest.
    #[inline]
    pub fn add(&mut self, r: &Request) {
        let mut b = [0u8; 32];
        b[..8].copy_from_slice(&r.time_ns.to_le_bytes());
        b[8..16].copy_from_slice(&r.lba.to_le_bytes());
        b[16..20].copy_from_slice(&r.blocks.to_le_bytes());
        b[20..24].copy_from_slice(&r.tenant.to_le_bytes());
        b[24] = r.op.code();
        self.0 = xxh3_64_with_seed(&b, self.0);
    }
}

/// What identifies the trace a checkpointed run reads: the file, its size
/// and detected format, and the digest of the requests applied so far.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TraceMark {
    /// The trace file as configured.
    pub(super) path: String,
    /// Its size [bytes] when the checkpoint was taken.
    pub(super) bytes: u64,
    /// The format it was read as (detected when not given).
    pub(super) format: String,
    /// [`Digest`] of the `Position::taken` requests applied.
    pub(super) digest: Digest,
}

/// What a checkpoint holds besides the engine's state: the replay's position.
#[derive(Serialize, Deserialize)]
pub(super) struct Position {
    pub(super) written: u64,
    pub(super) taken: u64,
    pub(super) pending: Option<Request>,
    pub(super) elapsed: f64,
    pub(super) prefill_seconds: f64,
    /// The settings the engine's state was built under (JSON; see
    /// `Simulation::binding`): the run rebuilt from the stored
    /// configuration must have the same, else the state is not its own.
    pub(super) binding: String,
    /// The trace read, for a trace replay.
    pub(super) trace: Option<TraceMark>,
}

/// The header of a checkpoint: read and checked (magic, format, length
/// against the file's size) before a byte of the body is; returns the open
/// file positioned at the body, the body's length and its checksum.
fn open_checked(path: &Path) -> Result<(fs::File, u64, u64)> {
    let mut f = fs::File::open(path).map_err(|e| refused(path, format!("cannot read: {e}")))?;
    let size = f
        .metadata()
        .map_err(|e| refused(path, format!("cannot read: {e}")))?
        .len();
    // The header's bytes, or as many as the file has.
    let mut head = Vec::with_capacity(HEADER_BYTES);
    Read::by_ref(&mut f)
        .take(HEADER_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| refused(path, format!("cannot read: {e}")))?;
    let n = head.len();
    if n < MAGIC.len() || &head[..MAGIC.len()] != MAGIC {
        return Err(refused(path, "not a wafer checkpoint (no WAFERCKP magic)"));
    }
    if n < MAGIC.len() + 4 {
        return Err(refused(path, "corrupt: the file ends inside its header"));
    }
    let format = u32::from_le_bytes(head[8..12].try_into().expect("4 bytes"));
    if format != FORMAT {
        return Err(refused(
            path,
            format!("checkpoint format {format}; this wafer reads format {FORMAT}: finish the run with the wafer that wrote it, or start it over"),
        ));
    }
    if n < HEADER_BYTES {
        return Err(refused(path, "corrupt: the file ends inside its header"));
    }
    let len = u64::from_le_bytes(head[12..20].try_into().expect("8 bytes"));
    let sum = u64::from_le_bytes(head[20..28].try_into().expect("8 bytes"));
    let have = size - HEADER_BYTES as u64;
    if len != have {
        return Err(refused(
            path,
            format!(
                "corrupt or truncated: its header says {len} bytes of state follow, the file has {have}"
            ),
        ));
    }
    Ok((f, len, sum))
}

/// The body of the checkpoint at `path`, its header and checksum verified.
fn verified_body(path: &Path) -> Result<Vec<u8>> {
    let (mut f, len, sum) = open_checked(path)?;
    let len = usize::try_from(len).map_err(|_| refused(path, "too large for this machine"))?;
    let mut body = Vec::new();
    body.try_reserve_exact(len)
        .map_err(|_| refused(path, format!("its {len} bytes do not fit in memory")))?;
    body.resize(len, 0);
    f.read_exact(&mut body)
        .map_err(|e| refused(path, format!("cannot read: {e}")))?;
    let got = xxh3_64(&body);
    if got != sum {
        return Err(refused(
            path,
            format!(
                "corrupt: the checksum of its {len} bytes of state is {got:016x}, its header says \
                 {sum:016x} (a damaged copy or disk); start the run over"
            ),
        ));
    }
    Ok(body)
}

/// The wafer version and configuration at the start of a verified body.
fn version_and_config(path: &Path, body: &[u8]) -> Result<RunConfig> {
    let named = in_file(path);
    // The version comes first, so a checkpoint of another version is named
    // as such rather than as corrupt.
    let version: String = decode(body).map_err(&named)?;
    if version != env!("CARGO_PKG_VERSION") {
        return Err(refused(
            path,
            format!(
                "written by wafer {version}; this is wafer {}: finish it with that version",
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    let (_, config): (String, String) = decode(body).map_err(&named)?;
    serde_json::from_str(&config)
        .map_err(|e| refused(path, format!("its run configuration does not parse: {e}")))
}

/// The run configuration stored in the checkpoint at `path` (as given to
/// the run), once the file's header, checksum and version check out; the
/// state itself is not decoded. A sweep compares it with its job's before
/// adopting the file (issue 42).
pub fn stored_config(path: &Path) -> Result<RunConfig> {
    let body = verified_body(path)?;
    version_and_config(path, &body)
}

/// The header and state of the checkpoint at `path`, verified (see the
/// module's doc).
pub(super) fn read(path: &Path) -> Result<(RunConfig, Position, EngineState)> {
    let body = verified_body(path)?;
    let cfg = version_and_config(path, &body)?;
    let (_, _, position, engine): (String, String, Position, _) =
        decode(&body).map_err(in_file(path))?;
    Ok((cfg, position, engine))
}

/// Write a checkpoint of the run configured by `config` (as given), at
/// `position`, with the engine's saved state, to `path` atomically.
pub(super) fn write(
    path: &Path,
    config: &RunConfig,
    position: &Position,
    engine: &EngineState,
) -> Result<()> {
    let named = in_file(path);
    let config = serde_json::to_string(config).expect("a run config serialises");
    let body = encode(&(env!("CARGO_PKG_VERSION"), config, position, engine)).map_err(named)?;
    let mut out = Vec::with_capacity(HEADER_BYTES + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&xxh3_64(&body).to_le_bytes());
    out.extend_from_slice(&body);
    write_atomic(path, &out)
}

/// A result as JSON without what measures the process rather than the run
/// (wall-clock times, allocated memory, a scratch annotation's path): what a
/// resumed run reproduces exactly.
pub fn comparable(r: &RunResult) -> serde_json::Value {
    fn drop_process(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                o.retain(|k, _| {
                    !(k.contains("seconds")
                        || k.ends_with("_ms")
                        || k.contains("memory")
                        || k == "user_writes_per_second"
                        || k == "engine_bytes_per_physical_block"
                        || k == "path")
                });
                o.values_mut().for_each(drop_process);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(drop_process),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(r).expect("results serialise");
    drop_process(&mut v);
    v
}

/// Where two JSON values differ: one line per path (`.a.b[3]: x vs y`).
pub fn differences(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    fn walk(a: &serde_json::Value, b: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        use serde_json::Value::{Array, Object};
        match (a, b) {
            (Object(x), Object(y)) => {
                for (k, v) in x {
                    match y.get(k) {
                        Some(w) => walk(v, w, &format!("{at}.{k}"), out),
                        None => out.push(format!("{at}.{k}: only in the first")),
                    }
                }
                for k in y.keys().filter(|k| !x.contains_key(*k)) {
                    out.push(format!("{at}.{k}: only in the second"));
                }
            }
            (Array(x), Array(y)) if x.len() == y.len() => {
                for (i, (v, w)) in x.iter().zip(y).enumerate() {
                    walk(v, w, &format!("{at}[{i}]"), out);
                }
            }
            _ if a != b => out.push(format!("{at}: {a} vs {b}")),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(a, b, "", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("wafer-ckpt-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.ckpt");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second state").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second state");
        let left: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temporary_files_of_dead_writers_are_removed() {
        let dir = std::env::temp_dir().join(format!("wafer-stale-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("run.ckpt");
        // No PID above Linux's largest pid_max is alive.
        let dead = dir.join(".run.ckpt.tmp-999999999");
        let mine = temp_path(&p).unwrap();
        let other = dir.join(".other.ckpt.tmp-999999999");
        let odd = dir.join(".run.ckpt.tmp-notapid");
        for f in [&dead, &mine, &other, &odd] {
            fs::write(f, b"partial").unwrap();
        }
        let removed = remove_stale_temps(&p);
        if Path::new("/proc/self").exists() {
            assert_eq!(removed, vec![dead.clone()]);
            assert!(!dead.exists());
        } else {
            assert!(removed.is_empty(), "liveness unknown: nothing removed");
        }
        assert!(mine.exists() && other.exists() && odd.exists());
        assert!(remove_stale_temps(&p).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("wafer-failw-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // Renaming a file over a non-empty directory fails.
        let p = dir.join("target");
        fs::create_dir_all(p.join("inside")).unwrap();
        assert!(write_atomic(&p, b"state").is_err());
        assert!(!temp_path(&p).unwrap().exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
