//! How a run's state is encoded for checkpoints (issue 15): bincode of the
//! engine's serde types, with the serde helpers they share (registry names,
//! JSON-valued reports, long arrays) and [`checkpoint_by_serde`], which
//! gives a policy or victim selector its `save_state` / `load_state`.
//!
//! Every registered placement policy and victim selector saves and loads its
//! state ([`crate::engine::Placement::save_state`],
//! [`crate::victim::VictimSelector::save_state`]); most by serde
//! ([`checkpoint_by_serde`]), the wrappers by their inner policy's. The file
//! a checkpoint is written to, and how a run resumes from it, belong to the
//! run layer ([`crate::run::checkpoint`]).

use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

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

/// The error of a policy or selector that has no checkpointable state.
pub fn unsupported(what: &str) -> Error {
    Error::Checkpoint {
        file: "<state>".into(),
        reason: format!("{what} cannot be checkpointed"),
    }
}

/// Implements [`crate::engine::Placement::save_state`] / `load_state` (or
/// the victim selector's) by serde for a type that derives `Serialize` and
/// `Deserialize` with every field it needs to go on.
#[macro_export]
macro_rules! checkpoint_by_serde {
    () => {
        fn save_state(&self) -> $crate::error::Result<Vec<u8>> {
            $crate::codec::encode(self)
        }
        fn load_state(&mut self, bytes: &[u8]) -> $crate::error::Result<()> {
            *self = $crate::codec::decode(bytes)?;
            Ok(())
        }
    };
}

/// A registry name held by a saved type: `&'static str` under another name,
/// so that serde's derive does not borrow it from the input (use it with
/// `#[serde(with = "crate::codec::static_str")]`).
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

#[cfg(test)]
mod tests {
    use super::*;

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
