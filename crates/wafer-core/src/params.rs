//! Policy parameters: a serde struct per policy, with the paper's defaults in
//! its `Default`. Users pass a JSON object of overrides; unknown keys and bad
//! values are errors that list what exists (never a silent fallback).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Parse `given` (a JSON object of overrides, or null) over `T::default()`.
pub fn parse<T: Serialize + DeserializeOwned + Default>(policy: &str, given: &Value) -> Result<T> {
    let mut merged = serde_json::to_value(T::default()).expect("parameter structs serialise");
    let defaults = merged
        .as_object_mut()
        .expect("parameter structs are JSON objects");
    match given {
        Value::Null => {}
        Value::Object(over) => {
            for (k, v) in over {
                if !defaults.contains_key(k) {
                    let known: Vec<&str> = defaults.keys().map(String::as_str).collect();
                    let known = if known.is_empty() {
                        "none (this policy takes no parameters)".to_string()
                    } else {
                        known.join(", ")
                    };
                    return Err(Error::Parameter {
                        policy: policy.to_string(),
                        reason: format!("unknown parameter '{k}'; known: {known}"),
                    });
                }
                defaults.insert(k.clone(), v.clone());
            }
        }
        other => {
            return Err(Error::Parameter {
                policy: policy.to_string(),
                reason: format!("parameters must be an object of name -> value, got {other}"),
            })
        }
    }
    serde_json::from_value(merged).map_err(|e| Error::Parameter {
        policy: policy.to_string(),
        reason: format!("bad parameter value: {e}"),
    })
}

/// The option named `value` of parameter `name` among `options` (name,
/// meaning), or an error naming the parameter, the value and what exists.
pub fn one_of<T: Copy>(policy: &str, name: &str, value: &str, options: &[(&str, T)]) -> Result<T> {
    options
        .iter()
        .find(|(n, _)| *n == value)
        .map(|&(_, t)| t)
        .ok_or_else(|| Error::Parameter {
            policy: policy.to_string(),
            reason: format!(
                "{name} = '{value}'; known: {}",
                options
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// The defaults of `T` as a JSON object (for `wafer policies --defaults`).
pub fn defaults<T: Serialize + Default>() -> Value {
    serde_json::to_value(T::default()).expect("parameter structs serialise")
}

/// Parameters of a policy that takes none.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct P {
        groups: u32,
        threshold: f64,
    }
    impl Default for P {
        fn default() -> Self {
            P {
                groups: 6,
                threshold: 0.15,
            }
        }
    }

    #[test]
    fn overrides_merge_over_defaults() {
        let p: P = parse("x", &serde_json::json!({"groups": 3})).unwrap();
        assert_eq!(
            p,
            P {
                groups: 3,
                threshold: 0.15
            }
        );
        let p: P = parse("x", &Value::Null).unwrap();
        assert_eq!(p, P::default());
    }

    #[test]
    fn unknown_key_lists_known_ones() {
        let e = parse::<P>("x", &serde_json::json!({"grups": 3}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("grups") && e.contains("groups, threshold"),
            "{e}"
        );
        let e = parse::<NoParams>("base", &serde_json::json!({"a": 1}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("takes no parameters"), "{e}");
    }

    #[test]
    fn bad_value_is_an_error() {
        let e = parse::<P>("x", &serde_json::json!({"groups": "many"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad parameter value"), "{e}");
    }
}
