//! A timed run's preconditioned drive, saved once and loaded by later runs
//! (issue 43): preconditioning a whole drive writes two drive-writes
//! (200 M pages on intel750, ~25 s), the same for every run of that drive,
//! policy and seed; loading it takes a few seconds.
//!
//! An entry holds everything the preconditioning leaves: the engine's
//! state (mapping, valid counts, segment states, the policy's and the
//! selector's state, statistics; [`Engine::write_state`]) and what stays in
//! DRAM (the cache's and the mapping table's entries,
//! [`timing::driver::WarmState`]). It is keyed by everything that
//! determines it: the settled run configuration without what only the
//! timed part reads (the trace, the run's length, arrivals, the flush),
//! plus the preconditioning's workload and length and wafer's version and
//! state format. The key is stored in the entry and compared on load, so
//! a hash collision or a stale entry is never loaded.
//!
//! File: magic `WAFERPRE`, format (u32 LE), then one zstd frame with its
//! content checksum (checked by the decoder: a flipped bit is refused)
//! holding bincode of (key, engine state, [`WarmState`]), streamed both
//! ways (never a second copy of the drive's tables in memory; the whole
//! frame, checksum included, is read before the state is used). Written
//! atomically (a temporary file renamed), so concurrent sweep workers
//! never read a torn entry.
//! The folder is bounded: after a save, least recently used entries
//! (by modification time, refreshed on load) go beyond [`max_bytes`].

use std::fs;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::config::RunConfig;
use crate::device::Geometry;
use crate::engine::{Engine, ReadState};
use crate::error::Error;
use crate::timing::driver::{WarmState, WarmStateOf};
pub use crate::timing::result::PreconditionCacheReport as CacheReport;
use crate::timing::{self, PreconditionCache};

const MAGIC: &[u8; 8] = b"WAFERPRE";
/// Layout of an entry and of the state it holds; bump when the engine's
/// saved state changes shape (its version is in the key too).
const FORMAT: u32 = 2;
/// Buffer between bincode's small writes and reads and zstd [bytes].
const BUFFER: usize = 1 << 20;

/// Smallest preconditioning saved [page writes]: smaller ones take a
/// second or less to run again.
pub const MIN_WRITES: u64 = 1 << 24;

/// Default bound of the cache folder [bytes] (`$WAFER_PRECONDITION_CACHE_GIB`
/// sets another, in GiB). An intel750 entry is about 0.7 GiB.
pub const MAX_BYTES: u64 = 8 << 30;

/// The folder's bound: `$WAFER_PRECONDITION_CACHE_GIB` GiB, else [`MAX_BYTES`].
pub fn max_bytes() -> u64 {
    std::env::var("WAFER_PRECONDITION_CACHE_GIB")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|g| g.is_finite() && *g >= 0.0)
        .map_or(MAX_BYTES, |g| (g * (1u64 << 30) as f64) as u64)
}

/// What an entry holds besides its key, loaded.
pub(super) struct Saved {
    pub(super) engine: ReadState,
    pub(super) warm: WarmState,
}

/// A run's entry: where it is and its key.
pub(super) struct Entry {
    pub(super) path: PathBuf,
    key: String,
}

/// The entry of a timed run, or `None` when it is not cached: the cache is
/// off, no folder, a preconditioning under [`MIN_WRITES`], or a policy
/// that reads the future (its annotation is part of its state).
pub(super) fn entry(
    cfg: &RunConfig,
    run: &timing::TimingRun,
    geo: &Geometry,
    spec: &str,
    future: bool,
) -> Option<Entry> {
    let p = run.precondition();
    let writes = (p * geo.logical_blocks as f64) as u64;
    if future || p <= 0.0 {
        return None;
    }
    // A folder given is used whatever the size (the user asked for it).
    let dir = match &run.precondition_cache {
        PreconditionCache::On(false) => return None,
        PreconditionCache::On(true) if writes < MIN_WRITES => return None,
        PreconditionCache::On(true) => {
            crate::future::cache_dir(cfg.cache_dir.as_deref())?.join("precondition")
        }
        PreconditionCache::Dir(d) => PathBuf::from(d),
    };
    // The settled configuration without what only the timed part reads.
    let mut c = cfg.clone();
    c.trace = None;
    c.writes = 0;
    c.drive_writes = None;
    c.workload = String::new();
    c.cache_dir = None;
    c.memory_limit = None;
    c.accuracy = false;
    let mut t = run.clone();
    t.arrival = timing::Arrival::Closed;
    t.queue_depth = 1;
    t.think_ns = 0;
    t.think = None;
    t.flush = true;
    t.idle_ns = 0;
    t.precondition_cache = PreconditionCache::default();
    t.precondition_drive_writes = Some(p);
    t.precondition_workload = Some(spec.to_string());
    c.timing = Some(t);
    let key = serde_json::json!({
        "wafer": env!("CARGO_PKG_VERSION"),
        "format": FORMAT,
        "run": c,
        "geometry": geo,
    })
    .to_string();
    let name = format!(
        "{}-{:016x}.wpre",
        run.ssd
            .name
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_"),
        crate::future::fnv1a(key.as_bytes())
    );
    Some(Entry {
        path: dir.join(name),
        key,
    })
}

impl Entry {
    /// The saved preconditioning, if a valid entry for this key exists;
    /// `Err(reason)` when one exists but cannot be used (it is rebuilt).
    pub(super) fn load(&self) -> std::result::Result<Option<(Saved, CacheReport)>, String> {
        let t0 = Instant::now();
        let mut f = match fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read it: {e}")),
        };
        let bytes = f.metadata().map(|m| m.len()).unwrap_or(0);
        let mut head = [0u8; 12];
        f.read_exact(&mut head)
            .map_err(|_| "truncated (no header)".to_string())?;
        if &head[..8] != MAGIC {
            return Err("not a wafer preconditioning".into());
        }
        let format = u32::from_le_bytes(head[8..].try_into().expect("4 bytes"));
        if format != FORMAT {
            return Err(format!("format {format}, this wafer writes {FORMAT}"));
        }
        let corrupt = |e: &dyn std::fmt::Display| format!("corrupt ({e})");
        let mut z = zstd::stream::read::Decoder::new(BufReader::new(f))
            .map(|d| BufReader::with_capacity(BUFFER, d))
            .map_err(|e| corrupt(&e))?;
        let key: String = bincode::deserialize_from(&mut z).map_err(|e| corrupt(&e))?;
        if key != self.key {
            return Err("saved for another drive or preconditioning (same name)".into());
        }
        let engine = Engine::read_state(&mut z).map_err(|e| corrupt(&e))?;
        let warm: WarmState = bincode::deserialize_from(&mut z).map_err(|e| corrupt(&e))?;
        // The frame's end: its checksum is checked here, before the state
        // is used (a flipped bit in the tables decodes to other numbers).
        let mut rest = Vec::new();
        z.read_to_end(&mut rest).map_err(|e| corrupt(&e))?;
        if !rest.is_empty() {
            return Err("corrupt (bytes after the state)".into());
        }
        let saved = Saved { engine, warm };
        // Recently used: kept longest by the size bound.
        if let Ok(f) = fs::File::options().append(true).open(&self.path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Ok(Some((
            saved,
            CacheReport {
                path: self.path.display().to_string(),
                loaded: true,
                saved: false,
                bytes,
                seconds: t0.elapsed().as_secs_f64(),
                note: None,
            },
        )))
    }

    /// Save the preconditioned state (before timing starts); the report
    /// says where, or why not (an unwritable folder: no cache, said).
    pub(super) fn save(&self, engine: &Engine, warm: WarmStateOf<'_>) -> CacheReport {
        let t0 = Instant::now();
        let mut rep = CacheReport {
            path: self.path.display().to_string(),
            ..Default::default()
        };
        let out = self.write(engine, &warm);
        match out {
            Ok(bytes) => {
                rep.saved = true;
                rep.bytes = bytes;
                if let Some(dir) = self.path.parent() {
                    evict(dir, &self.path, max_bytes());
                }
            }
            Err(e) => rep.note = Some(format!("not saved: {e}")),
        }
        rep.seconds = t0.elapsed().as_secs_f64();
        rep
    }

    fn write(&self, engine: &Engine, warm: &WarmStateOf<'_>) -> std::result::Result<u64, String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        super::checkpoint::write_atomic_with(&self.path, |f| {
            f.write_all(MAGIC)?;
            f.write_all(&FORMAT.to_le_bytes())?;
            let mut z = zstd::stream::write::Encoder::new(BufWriter::new(&mut *f), 1)?;
            z.include_checksum(true)?;
            let mut b = BufWriter::with_capacity(BUFFER, z);
            bincode::serialize_into(&mut b, &self.key).map_err(std::io::Error::other)?;
            engine.write_state(&mut b).map_err(std::io::Error::other)?;
            bincode::serialize_into(&mut b, warm).map_err(std::io::Error::other)?;
            let z = b.into_inner().map_err(|e| e.into_error())?;
            z.finish()?.flush()
        })
        .map_err(|e| match e {
            Error::Checkpoint { reason, .. } => reason,
            e => e.to_string(),
        })?;
        fs::metadata(&self.path)
            .map(|m| m.len())
            .map_err(|e| e.to_string())
    }
}

/// Remove the least recently used entries of `dir` (never `keep`) until
/// the entries take at most `max` bytes.
fn evict(dir: &Path, keep: &Path, max: u64) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "wpre"))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, m.len(), e.path()))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    entries.sort();
    for (_, len, path) in entries {
        if total <= max {
            break;
        }
        if path != keep && fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_keeps_the_newest_within_the_bound() {
        let dir = std::env::temp_dir().join(format!("wafer-pre-evict-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let t = SystemTime::now();
        for (i, name) in ["a.wpre", "b.wpre", "c.wpre", "d.txt"].iter().enumerate() {
            let p = dir.join(name);
            fs::write(&p, vec![0u8; 100]).unwrap();
            let f = fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(t - std::time::Duration::from_secs(100 - i as u64))
                .unwrap();
        }
        // Bound 150 bytes: the oldest go first, never the kept one (the
        // entry just saved), nor a file that is not an entry.
        evict(&dir, &dir.join("a.wpre"), 150);
        let left: Vec<_> = {
            let mut v: Vec<_> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(left, ["a.wpre", "d.txt"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
