//! Checkpoint files of a replay in progress (issue 15): the complete state
//! of a run (FTL, statistics, the placement policy with its models,
//! samplers and RNGs, the victim selector, the annotated future's cursor,
//! the position in the request stream) written atomically, so that a killed
//! multi-hour replay resumes to exactly the result the uninterrupted run
//! gives.
//!
//! A file holds a magic tag, the format version, the wafer version that wrote
//! it, the run's configuration (JSON) and the state (bincode of the engine's
//! serde types, [`crate::codec`]). The request stream itself is not stored:
//! on resume the source is opened again from the configuration and the
//! requests already applied are read past, which leaves a trace reader or a
//! generator exactly where it was (with the same statistics of what it
//! read); annotations are re-derived the same way (cached for traces). A
//! learned policy whose training runs on a thread is checkpointed between
//! trainings: the simulation waits for the next request boundary at which no
//! training is in flight. Timing mode cannot be checkpointed (its event
//! queue is not serialisable); asking for it is an error before the run.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{RunConfig, RunResult};
use crate::codec::{decode, encode};
use crate::engine::EngineState;
use crate::error::{Error, Result};
use crate::request::Request;

/// First bytes of every checkpoint file.
pub const MAGIC: &[u8; 8] = b"WAFERCKP";
/// Version of the layout after the magic; a file of another version is
/// refused with a clear error.
pub const FORMAT: u32 = 1;

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

/// Write `bytes` to `path` atomically: a temporary file in the same
/// directory, flushed to disk, then renamed over `path` (a kill at any
/// point leaves the previous checkpoint or the new one, never a torn file).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let err = |e: std::io::Error| Error::Checkpoint {
        file: path.display().to_string(),
        reason: format!("cannot write: {e}"),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => ".".into(),
    };
    let name = path.file_name().ok_or_else(|| Error::Checkpoint {
        file: path.display().to_string(),
        reason: "not a file name".into(),
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut f = fs::File::create(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    drop(f);
    fs::rename(&tmp, path).map_err(err)?;
    // The rename itself reaches the disk with the directory's entry.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// What a checkpoint holds besides the engine's state: the replay's position.
#[derive(Serialize, Deserialize)]
pub(super) struct Position {
    pub(super) written: u64,
    pub(super) taken: u64,
    pub(super) pending: Option<Request>,
    pub(super) elapsed: f64,
    pub(super) prefill_seconds: f64,
    /// Bytes of the trace file, to refuse a trace that changed.
    pub(super) trace_bytes: Option<u64>,
}

/// The header and state of the checkpoint at `path`.
pub(super) fn read(path: &std::path::Path) -> Result<(RunConfig, Position, EngineState)> {
    let named = in_file(path);
    let err = |reason: String| {
        named(Error::Checkpoint {
            file: String::new(),
            reason,
        })
    };
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let magic = MAGIC;
    if bytes.len() < magic.len() + 4 || &bytes[..magic.len()] != magic {
        return Err(err("not a wafer checkpoint".into()));
    }
    let format = u32::from_le_bytes(
        bytes[magic.len()..magic.len() + 4]
            .try_into()
            .expect("4 bytes"),
    );
    if format != FORMAT {
        return Err(err(format!(
            "checkpoint format {format}; this wafer reads format {}",
            FORMAT
        )));
    }
    let body = &bytes[magic.len() + 4..];
    // The version comes first, so a checkpoint of another version is named
    // as such rather than as corrupt.
    let version: String = decode(body).map_err(&named)?;
    if version != env!("CARGO_PKG_VERSION") {
        return Err(err(format!(
            "written by wafer {version}; this is wafer {}: finish it with that version",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let (_, config, position, engine): (String, String, Position, _) =
        decode(body).map_err(&named)?;
    let cfg: RunConfig = serde_json::from_str(&config)
        .map_err(|e| err(format!("its run configuration does not parse: {e}")))?;
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
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    let body = encode(&(env!("CARGO_PKG_VERSION"), config, position, engine)).map_err(named)?;
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
}
