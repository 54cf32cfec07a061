//! Future knowledge: when each written block dies.
//!
//! * [`annotate`] computes it for a run's request stream ([`annotate`](mod@annotate)
//!   has the streamed backward pass and the file format), cached for a trace
//!   in the cache folder ([`cache_dir`]) so repeated runs reuse it;
//! * [`Future`] hands it to the engine during a replay: the death of each user
//!   write as it is placed and of each live block as GC moves it. Oracles
//!   place by it; every run with it also scores the policy's predictions
//!   ([`accuracy`]);
//! * the engine checks it on every overwrite and trim (the old copy must die
//!   exactly then), so a stale or wrong annotation stops the run instead of
//!   silently changing the result.

pub mod accuracy;
pub mod annotate;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::device::Geometry;
use crate::error::{Error, Result};
use crate::request::Op;
use crate::source::StreamSpec;

pub use accuracy::{AccuracyReport, ClassReport};
pub use annotate::{Annotation, Annotator, DeathReader, NEVER};

/// Remaining lifetime of a block dying at `death`, seen at `now` ([`NEVER`] stays).
#[inline(always)]
pub fn remaining(death: u64, now: u64) -> u64 {
    if death == NEVER {
        NEVER
    } else {
        death.saturating_sub(now)
    }
}

/// How a run got its annotation.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct AnnotationInfo {
    /// The annotation file (removed after the run when `cached` is false and
    /// it was a scratch file).
    pub path: String,
    /// Reused from an earlier run.
    pub reused: bool,
    /// Kept in the cache folder for later runs.
    pub cached: bool,
    /// User block writes annotated.
    pub writes: u64,
    /// Size of the annotation file [bytes].
    pub bytes: u64,
    /// Wall time to annotate or open it [s].
    pub seconds: f64,
}

/// The annotation cache folder: `dir` if given, else `$WAFER_CACHE_DIR`,
/// else `$XDG_CACHE_HOME/wafer`, else `~/.cache/wafer`.
pub fn cache_dir(dir: Option<&str>) -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    dir.map(PathBuf::from)
        .or_else(|| env("WAFER_CACHE_DIR"))
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("wafer")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("wafer")))
}

/// Annotate the request stream `spec` makes: a trace's whole stream (cached
/// in the cache folder, [`cache_dir`] of `cache`, as
/// `TRACE-NAME.<key hash>.wlife` when it is writable), or a synthetic
/// workload's first `writes` blocks (in a scratch file).
pub fn annotate(spec: &StreamSpec, cache: Option<&str>) -> Result<(Annotation, AnnotationInfo)> {
    let t0 = Instant::now();
    let mut cfg = spec.clone();
    // Only the logical size and block size matter here: accept any segment
    // size and spare space, so a trace can be annotated on its own.
    cfg.device.segment_blocks = 1;
    cfg.device.physical_blocks = None;
    cfg.device.gc_mode = crate::device::GcMode::Watermark;
    cfg.device.op = cfg.device.op.max(0.01);
    cfg.resolve()?;
    let geo = cfg.device.geometry()?;
    let (out, key, cached) = match &cfg.trace {
        Some(t) => {
            // The files the trace is made of: the file itself, or the
            // per-CPU files of a blktrace base name.
            let files = if std::path::Path::new(&t.path).is_file() {
                vec![t.path.clone()]
            } else {
                crate::trace::blktrace::per_cpu_files(&t.path)
            };
            let mut stamp = Vec::new();
            for f in files.iter().chain(files.is_empty().then_some(&t.path)) {
                let meta = std::fs::metadata(f)
                    .map_err(|e| Error::trace(f, None, format!("cannot read: {e}")))?;
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                stamp.push(serde_json::json!([f, meta.len(), mtime.to_string()]));
            }
            let canon = std::fs::canonicalize(&t.path).unwrap_or_else(|_| PathBuf::from(&t.path));
            let mut key = serde_json::json!({
                "trace": canon.display().to_string(),
                "files": stamp,
                "format": t.format,
                "selection": t.selection,
                "block_size": geo.block_size,
                "remap": t.remap,
                "repeat": t.repeat,
                "logical_blocks": geo.logical_blocks,
            });
            if let Some(n) = t.extend {
                // the continuation is drawn with the run's seed
                key["extend"] = serde_json::json!([n, cfg.seed]);
            }
            let key = key.to_string();
            let name = canon
                .file_name()
                .map_or_else(|| "trace".into(), |n| n.to_string_lossy().into_owned());
            let cache = cache_dir(cache)
                .map(|d| d.join(format!("{name}.{:016x}.wlife", fnv1a(key.as_bytes()))));
            if let Some(c) = &cache {
                if let Ok(a) = Annotation::open(c) {
                    if a.key() == key {
                        let info = info(&a, true, true, t0);
                        return Ok((a, info));
                    }
                }
            }
            match cache.filter(|c| writable_dir(c)) {
                Some(c) => (c, key, true),
                None => (scratch_path(), key, false),
            }
        }
        None => {
            let key = serde_json::json!({
                "workload": cfg.workload,
                "seed": cfg.seed,
                "writes": cfg.writes,
                "logical_blocks": geo.logical_blocks,
                "block_size": geo.block_size,
            })
            .to_string();
            (scratch_path(), key, false)
        }
    };
    let cap = if cfg.trace.is_some() {
        u64::MAX
    } else {
        cfg.writes
    };
    let (mut source, geo) = cfg.open()?;
    let mut ann = Annotator::new(geo.logical_blocks as u64, &out)?;
    while ann.writes() < cap {
        let Some(r) = source.next()? else { break };
        match r.op {
            Op::Write => {
                let n = (r.blocks as u64).min(cap - ann.writes()) as u32;
                ann.write(r.lba, n)?;
            }
            Op::Trim => ann.trim(r.lba, r.blocks)?,
            Op::Read => {}
        }
    }
    let mut a = ann.finish(&out, &key)?;
    a.set_scratch(!cached);
    let info = info(&a, false, cached, t0);
    Ok((a, info))
}

fn info(a: &Annotation, reused: bool, cached: bool, t0: Instant) -> AnnotationInfo {
    AnnotationInfo {
        path: a.path().display().to_string(),
        reused,
        cached,
        writes: a.writes(),
        bytes: std::fs::metadata(a.path()).map_or(0, |m| m.len()),
        seconds: t0.elapsed().as_secs_f64(),
    }
}

fn writable_dir(file: &Path) -> bool {
    if let Some(dir) = file.parent() {
        if std::fs::create_dir_all(dir).is_err() {
            return false;
        }
    }
    let probe = PathBuf::from(format!("{}.probe", file.display()));
    let ok = std::fs::File::create(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

fn scratch_path() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "wafer-{}-{}.wlife",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// FNV-1a, 64 bit: a stable name for a cache key.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A [`Future`]'s position in its annotation (see [`Future::cursor`]).
#[derive(Serialize, serde::Deserialize)]
pub struct FutureCursor {
    buf: Vec<u64>,
    pos: usize,
    next_chunk: u64,
    prefill_end: u64,
    offset: u64,
    live: Vec<u64>,
    batch: Vec<u64>,
}

/// The annotated future, as the engine uses it during a replay. Times are
/// the run's logical clock (a prefill shifts the annotation by its writes).
pub struct Future {
    reader: DeathReader,
    /// Per LBA: when the content written by the prefill dies [stream time].
    first: Vec<u64>,
    /// Writes before this clock value belong to the prefill.
    prefill_end: u64,
    /// Run clock of the annotation's time 0.
    offset: u64,
    /// Per LBA: death of its live copy [run clock]; [`NEVER`] if unmapped.
    live: Vec<u64>,
    /// Deaths of the user-write batch being placed.
    pub(crate) batch: Vec<u64>,
}

impl Future {
    /// Prepare `ann` for a run on `geo`, prefilled or not.
    pub fn new(ann: Arc<Annotation>, prefill: bool, geo: &Geometry) -> Result<Self> {
        let l = geo.logical_blocks as u64;
        if ann.table_len() != l {
            return Err(Error::Simulation(format!(
                "annotation {} is of a device of {} logical blocks, this run has {l}",
                ann.path().display(),
                ann.table_len()
            )));
        }
        let first = if prefill {
            ann.first_events()?
        } else {
            Vec::new()
        };
        let end = if prefill { l } else { 0 };
        Ok(Future {
            reader: DeathReader::new(ann),
            first,
            prefill_end: end,
            offset: end,
            live: vec![NEVER; l as usize],
            batch: Vec::with_capacity(crate::request::MAX_BATCH),
        })
    }

    /// Where the run is in the annotation, for a checkpoint (the
    /// annotation itself is derived again from the stream on resume).
    pub fn cursor(&self) -> FutureCursor {
        let (buf, pos, next_chunk) = self.reader.position();
        FutureCursor {
            buf,
            pos,
            next_chunk,
            prefill_end: self.prefill_end,
            offset: self.offset,
            live: self.live.clone(),
            batch: self.batch.clone(),
        }
    }

    /// Go on from a [`Future::cursor`] taken on the same annotation.
    pub fn set_cursor(&mut self, c: FutureCursor) -> Result<()> {
        if c.live.len() != self.live.len() {
            return Err(Error::Checkpoint {
                file: "<state>".into(),
                reason: format!(
                    "its annotation covers {} logical blocks, this run's {}",
                    c.live.len(),
                    self.live.len()
                ),
            });
        }
        self.reader.set_position(c.buf, c.pos, c.next_chunk);
        self.prefill_end = c.prefill_end;
        self.offset = c.offset;
        self.live = c.live;
        self.batch = c.batch;
        Ok(())
    }

    /// Death [run clock] of the user write of `lba` at `now`.
    #[inline]
    pub(crate) fn death_of_write(&mut self, lba: u32, now: u64) -> Result<u64> {
        let d = if now < self.prefill_end {
            self.first[lba as usize]
        } else {
            match self.reader.next_death()? {
                Some(d) => d,
                None => {
                    return Err(Error::Simulation(format!(
                        "the replay writes more blocks than annotation {} holds ({})",
                        self.reader.annotation().path().display(),
                        self.reader.annotation().writes()
                    )))
                }
            }
        };
        Ok(if d == NEVER { NEVER } else { d + self.offset })
    }

    /// Death [run clock] of the `i`-th block of the batch being placed.
    #[inline(always)]
    pub fn batch_death(&self, i: usize) -> u64 {
        self.batch[i]
    }

    /// Death [run clock] of the live copy of `lba` ([`NEVER`] if unmapped or
    /// never overwritten).
    #[inline(always)]
    pub fn live_death(&self, lba: u32) -> u64 {
        self.live[lba as usize]
    }

    /// Hint: `lba`'s live death will be read soon.
    #[inline(always)]
    pub(crate) fn prefetch(&self, lba: u32) {
        crate::prefetch::prefetch(&self.live, lba as usize);
    }

    /// The copy of `lba` written last dies at `death`.
    #[inline(always)]
    pub(crate) fn set_live(&mut self, lba: u32, death: u64) {
        self.live[lba as usize] = death;
    }

    /// The old copy of `lba` dies now: check the annotation agrees.
    #[inline(always)]
    pub(crate) fn check_death(&self, lba: u32, now: u64, what: &str) -> Result<()> {
        let d = self.live[lba as usize];
        if d == now {
            Ok(())
        } else {
            Err(self.disagree(lba, now, d, what))
        }
    }

    #[cold]
    fn disagree(&self, lba: u32, now: u64, d: u64, what: &str) -> Error {
        Error::Invariant(format!(
            "annotation {} disagrees with the replay: LBA {lba} is {what} at time {now}, \
             the annotation says its copy dies at {} (a stale annotation? delete it to recompute)",
            self.reader.annotation().path().display(),
            if d == NEVER {
                "never".to_string()
            } else {
                d.to_string()
            }
        ))
    }

    /// Bytes held (per-LBA tables and the read buffer).
    pub fn memory_bytes(&self) -> usize {
        (self.first.capacity()
            + self.live.capacity()
            + self.batch.capacity()
            + annotate::READ_CHUNK)
            * 8
    }
}
