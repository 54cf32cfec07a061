//! A minimal reader and writer of the safetensors format (f32 tensors only),
//! so weights trained by wafer-learn (candle) or by PyTorch load into the
//! engine's kernels without a dependency.
//!
//! Layout: u64 little-endian header length N, N bytes of JSON
//! `{"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//! "__metadata__": {..}}`, then the data (offsets relative to its start).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// Named f32 tensors, with the file's string metadata.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tensors {
    /// Tensors by name: shape and row-major values.
    pub tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
    /// `__metadata__` entries (e.g. `policy`, `model`).
    pub metadata: BTreeMap<String, String>,
    /// Where they were read from, for error messages.
    pub source: String,
}

fn bad(source: &str, why: impl Into<String>) -> Error {
    Error::Model {
        file: source.to_string(),
        reason: why.into(),
    }
}

impl Tensors {
    /// Parse safetensors bytes; `source` names them in errors.
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Self> {
        let n = bytes
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| {
                bad(
                    source,
                    "not a safetensors file (shorter than its 8-byte header length)",
                )
            })?;
        let end = 8u64
            .checked_add(n)
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| {
                bad(
                    source,
                    format!("header of {n} bytes runs past the end of the file"),
                )
            })?;
        let header: Map<String, Value> = serde_json::from_slice(&bytes[8..end as usize])
            .map_err(|e| bad(source, format!("header is not a JSON object: {e}")))?;
        let data = &bytes[end as usize..];
        let mut t = Tensors {
            source: source.to_string(),
            ..Default::default()
        };
        for (name, v) in header {
            if name == "__metadata__" {
                if let Some(m) = v.as_object() {
                    for (k, v) in m {
                        t.metadata
                            .insert(k.clone(), v.as_str().unwrap_or_default().to_string());
                    }
                }
                continue;
            }
            let dtype = v.get("dtype").and_then(Value::as_str).unwrap_or("?");
            if dtype != "F32" {
                return Err(bad(
                    source,
                    format!("tensor '{name}' is {dtype}; wafer reads F32 tensors only (convert with .float())"),
                ));
            }
            let shape: Vec<usize> = v
                .get("shape")
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .ok_or_else(|| bad(source, format!("tensor '{name}' has no valid shape")))?;
            let off: [usize; 2] = v
                .get("data_offsets")
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .ok_or_else(|| bad(source, format!("tensor '{name}' has no valid data_offsets")))?;
            let count: usize = shape.iter().product();
            if off[0] > off[1] || off[1] > data.len() || off[1] - off[0] != count * 4 {
                return Err(bad(
                    source,
                    format!(
                        "tensor '{name}' of shape {shape:?} needs {} bytes, its offsets {off:?} give {} \
                         within {} bytes of data (truncated or corrupt?)",
                        count * 4,
                        off[1].saturating_sub(off[0]),
                        data.len()
                    ),
                ));
            }
            let vals = data[off[0]..off[1]]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect();
            t.tensors.insert(name, (shape, vals));
        }
        Ok(t)
    }

    /// Read a safetensors file.
    pub fn load(path: &Path) -> Result<Self> {
        let s = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| bad(&s, format!("cannot read: {e}")))?;
        Self::from_bytes(&bytes, &s)
    }

    /// Read the model file of `policy`: when its metadata names a policy,
    /// it must be this one.
    pub fn load_for(path: &str, policy: &str) -> Result<Self> {
        let t = Self::load(Path::new(path))?;
        match t.metadata.get("policy") {
            Some(p) if p != policy => {
                Err(bad(path, format!("a model for policy '{p}', not {policy}")))
            }
            _ => Ok(t),
        }
    }

    /// Serialise as safetensors.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut header = Map::new();
        let mut data = Vec::new();
        for (name, (shape, vals)) in &self.tensors {
            let begin = data.len();
            for v in vals {
                data.extend_from_slice(&v.to_le_bytes());
            }
            header.insert(
                name.clone(),
                json!({"dtype": "F32", "shape": shape, "data_offsets": [begin, data.len()]}),
            );
        }
        if !self.metadata.is_empty() {
            header.insert("__metadata__".into(), json!(self.metadata));
        }
        let mut h = Value::Object(header).to_string().into_bytes();
        while !(8 + h.len()).is_multiple_of(8) {
            h.push(b' ');
        }
        let mut out = Vec::with_capacity(8 + h.len() + data.len());
        out.extend_from_slice(&(h.len() as u64).to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(&data);
        out
    }

    /// Write as a safetensors file.
    pub fn save(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_bytes())
            .map_err(|e| bad(&path.display().to_string(), format!("cannot write: {e}")))
    }

    /// Add a tensor.
    pub fn insert(&mut self, name: &str, shape: &[usize], vals: Vec<f32>) {
        debug_assert_eq!(shape.iter().product::<usize>(), vals.len());
        self.tensors
            .insert(name.to_string(), (shape.to_vec(), vals));
    }

    /// Tensor `name`, which must have `shape`; a clear error otherwise.
    pub fn take(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let (s, v) = self.tensors.get(name).ok_or_else(|| {
            bad(
                &self.source,
                format!(
                    "no tensor '{name}' (has: {})",
                    self.tensors.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            )
        })?;
        if s != shape {
            return Err(bad(
                &self.source,
                format!("tensor '{name}' has shape {s:?}, this model needs {shape:?}"),
            ));
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(bad(
                &self.source,
                format!(
                    "tensor '{name}' holds a non-finite value at index {i} (diverged training?)"
                ),
            ));
        }
        Ok(v.clone())
    }

    /// Shape of tensor `name`, if present.
    pub fn shape(&self, name: &str) -> Option<&[usize]> {
        self.tensors.get(name).map(|(s, _)| s.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_clear_errors() {
        let mut t = Tensors::default();
        t.insert("a.weight", &[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        t.insert("a.bias", &[2], vec![-1.0, 0.5]);
        t.metadata.insert("policy".into(), "dogi".into());
        let bytes = t.to_bytes();
        let mut back = Tensors::from_bytes(&bytes, "mem").unwrap();
        back.source.clear();
        assert_eq!(back, t);
        let e = back.take("a.weight", &[3, 2]).unwrap_err().to_string();
        assert!(e.contains("shape [2, 3]") && e.contains("[3, 2]"), "{e}");
        let e = back.take("b", &[1]).unwrap_err().to_string();
        assert!(e.contains("no tensor 'b'") && e.contains("a.bias"), "{e}");
        let e = Tensors::from_bytes(&bytes[..bytes.len() - 4], "cut.safetensors")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cut.safetensors") && e.contains("truncated"),
            "{e}"
        );
        let e = Tensors::from_bytes(b"xx", "tiny").unwrap_err().to_string();
        assert!(e.contains("not a safetensors file"), "{e}");
        let mut nan = t.clone();
        nan.insert("a.bias", &[2], vec![f32::NAN, 0.0]);
        let nan = Tensors::from_bytes(&nan.to_bytes(), "nan").unwrap();
        let e = nan.take("a.bias", &[2]).unwrap_err().to_string();
        assert!(e.contains("non-finite"), "{e}");
    }
}
