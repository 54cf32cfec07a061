//! Checkpoints of a replay in progress (issue 15): the complete state of a
//! run (FTL, statistics, the placement policy with its models, samplers and
//! RNGs, the victim selector, the annotated future's cursor, the position in
//! the request stream) written atomically, so that a killed multi-hour replay
//! resumes to exactly the result the uninterrupted run gives.
//!
//! A file holds a magic tag, the format version, the wafer version that wrote
//! it, the run's configuration (JSON) and the state (bincode of the engine's
//! serde types). The request stream itself is not stored: on resume the
//! source is opened again from the configuration and the requests already
//! applied are read past, which leaves a trace reader or a generator exactly
//! where it was (with the same statistics of what it read); annotations are
//! re-derived the same way (cached for traces).
//!
//! Every registered placement policy and victim selector saves and loads its
//! state ([`crate::policy::Placement::save_state`],
//! [`crate::victim::VictimSelector::save_state`]); most by serde
//! ([`checkpoint_by_serde`]), the wrappers by their inner policy's. A learned
//! policy whose training runs on a thread is checkpointed between
//! trainings: the simulation waits for the next request boundary at which no
//! training is in flight. Timing mode cannot be checkpointed (its event
//! queue is not serialisable); asking for it is an error before the run.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// First bytes of every checkpoint file.
pub const MAGIC: &[u8; 8] = b"WAFERCKP";
/// Version of the layout after the magic; a file of another version is
/// refused with a clear error.
pub const FORMAT: u32 = 1;

/// Encode a state (bincode).
pub fn encode<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>> {
    bincode::serialize(v).map_err(|e| Error::Checkpoint {
        file: "<state>".into(),
        reason: format!("cannot encode the state: {e}"),
    })
}

/// Decode a state written by [`encode`]; a mismatch is a clear error.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    bincode::deserialize(bytes).map_err(|e| Error::Checkpoint {
        file: "<state>".into(),
        reason: format!("corrupt or of another wafer version ({e})"),
    })
}

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

/// The error of a policy or selector that has no checkpointable state.
pub fn unsupported(what: &str) -> Error {
    Error::Checkpoint {
        file: "<state>".into(),
        reason: format!("{what} cannot be checkpointed"),
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

/// Implements [`crate::policy::Placement::save_state`] / `load_state` (or
/// the victim selector's) by serde for a type that derives `Serialize` and
/// `Deserialize` with every field it needs to go on.
#[macro_export]
macro_rules! checkpoint_by_serde {
    () => {
        fn save_state(&self) -> $crate::error::Result<Vec<u8>> {
            $crate::checkpoint::encode(self)
        }
        fn load_state(&mut self, bytes: &[u8]) -> $crate::error::Result<()> {
            *self = $crate::checkpoint::decode(bytes)?;
            Ok(())
        }
    };
}

/// A registry name held by a saved type: `&'static str` under another name,
/// so that serde's derive does not borrow it from the input (use it with
/// `#[serde(with = "crate::checkpoint::static_str")]`).
pub type Name = &'static str;

/// Serde for `&'static str` fields (registry names): written as text, read
/// back as one interned copy per distinct name.
pub mod static_str {
    use super::*;

    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

    /// Write the name.
    pub fn serialize<S: Serializer>(
        v: &&'static str,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(v)
    }

    /// Read a name back as a `'static` string.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<&'static str, D::Error> {
        let s = String::deserialize(d)?;
        Ok(intern(&s))
    }

    /// The one `'static` copy of `s` (names are few and small).
    pub fn intern(s: &str) -> &'static str {
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = names.iter().find(|n| **n == s) {
            return n;
        }
        let n: &'static str = Box::leak(s.to_string().into_boxed_str());
        names.push(n);
        n
    }
}

/// Serde for fields holding JSON values (a policy's reports): written as
/// JSON text, since bincode cannot read self-describing values back
/// (serde_json's `float_roundtrip` reads every float back bit for bit).
pub mod as_json {
    use super::*;
    use serde::de::Error as _;
    use serde::ser::Error as _;

    /// Write the value as JSON text.
    pub fn serialize<T: Serialize, S: Serializer>(
        v: &T,
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let text = serde_json::to_string(v).map_err(S::Error::custom)?;
        s.serialize_str(&text)
    }

    /// Read the value back from its JSON text.
    pub fn deserialize<'de, T: DeserializeOwned, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<T, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(D::Error::custom)
    }
}

/// Serde for arrays longer than serde's 32 (histograms, per-class tables).
pub mod array {
    use super::*;
    use serde::de::Error as _;

    /// Write the array as a sequence.
    pub fn serialize<T: Serialize, const N: usize, S: Serializer>(
        v: &[T; N],
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        v.as_slice().serialize(s)
    }

    /// Read a sequence of exactly `N` values.
    pub fn deserialize<'de, T: Deserialize<'de>, const N: usize, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<[T; N], D::Error> {
        let v = Vec::<T>::deserialize(d)?;
        let n = v.len();
        v.try_into()
            .map_err(|_| D::Error::custom(format!("{n} values where {N} were expected")))
    }
}

/// Serde for vectors of arrays longer than 32 (per-group histograms).
pub mod arrays {
    use super::*;
    use serde::de::Error as _;

    /// Write the arrays as a sequence of sequences.
    pub fn serialize<T: Serialize, const N: usize, S: Serializer>(
        v: &[[T; N]],
        s: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|a| a.as_slice()))
    }

    /// Read sequences of exactly `N` values each.
    pub fn deserialize<'de, T: Deserialize<'de>, const N: usize, D: Deserializer<'de>>(
        d: D,
    ) -> std::result::Result<Vec<[T; N]>, D::Error> {
        Vec::<Vec<T>>::deserialize(d)?
            .into_iter()
            .map(|v| {
                let n = v.len();
                v.try_into()
                    .map_err(|_| D::Error::custom(format!("{n} values where {N} were expected")))
            })
            .collect()
    }
}

/// Stands in for the placement policy and the victim selector of an engine
/// decoded from a checkpoint, until the run's own (built from the same
/// configuration, then loaded with their saved states) take their place in
/// [`crate::ftl::Engine::load_state`]. It never sees a request.
struct Vacant;

impl crate::policy::Placement for Vacant {
    fn name(&self) -> &'static str {
        "vacant"
    }
    fn groups(&self) -> usize {
        1
    }
    fn place_user(
        &mut self,
        _ctx: &crate::policy::Ctx,
        _writes: &[crate::policy::UserWrite],
        out: &mut [crate::ftl::GroupId],
    ) {
        out.fill(0);
    }
    fn place_gc(
        &mut self,
        _ctx: &crate::policy::Ctx,
        _b: &crate::policy::GcBlock,
    ) -> crate::ftl::GroupId {
        0
    }
}

impl crate::victim::VictimSelector for Vacant {
    fn name(&self) -> &'static str {
        "vacant"
    }
    fn on_seal(&mut self, _seg: crate::ftl::SegmentId, _ftl: &crate::ftl::Ftl) {}
    fn select(&mut self, _ftl: &crate::ftl::Ftl, _max_valid: u32) -> Option<crate::ftl::SegmentId> {
        None
    }
    fn remove(&mut self, _seg: crate::ftl::SegmentId, _ftl: &crate::ftl::Ftl) {}
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// The placeholder policy of a decoding engine.
pub(crate) fn vacant_policy() -> Box<dyn crate::policy::Placement> {
    Box::new(Vacant)
}

/// The placeholder victim selector of a decoding engine.
pub(crate) fn vacant_selector() -> Box<dyn crate::victim::VictimSelector> {
    Box::new(Vacant)
}

/// A result as JSON without what measures the process rather than the run
/// (wall-clock times, allocated memory, a scratch annotation's path): what a
/// resumed run reproduces exactly.
pub fn comparable(r: &crate::sim::RunResult) -> serde_json::Value {
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
    fn names_come_back_interned() {
        #[derive(Serialize, Deserialize)]
        struct Named {
            #[serde(with = "static_str")]
            name: Name,
        }
        let b = encode(&Named { name: "sepbit" }).unwrap();
        let a: Named = decode(&b).unwrap();
        let c: Named = decode(&b).unwrap();
        assert_eq!(a.name, "sepbit");
        assert!(std::ptr::eq(a.name, c.name));
    }

    #[test]
    fn a_truncated_state_is_an_error_not_a_panic() {
        let b = encode(&vec![1u64, 2, 3]).unwrap();
        let r: Result<Vec<u64>> = decode(&b[..b.len() - 3]);
        assert!(matches!(r, Err(Error::Checkpoint { .. })));
    }
}
