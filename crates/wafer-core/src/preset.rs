//! Device presets: the simulated devices of the papers, by name
//! (`--preset NAME` on the command line, `Device.preset(NAME)` in Python).
//! A preset sets device fields (and the victim selector the paper used);
//! anything the user gives explicitly wins over it. One row of [`PRESETS`]
//! per paper device.

use serde_json::{json, Value};

use crate::device::DeviceConfig;
use crate::error::{lookup, Error, Result};

/// A named device.
pub struct Preset {
    /// Name used by `--preset`.
    pub name: &'static str,
    /// One line: whose device, what is in it.
    pub description: &'static str,
    /// The device fields it sets (a JSON object over [`DeviceConfig`]).
    pub device: fn() -> Value,
    /// The victim selector the paper's device uses.
    pub victim: &'static str,
    /// Fields that depend on the drive's logical size [bytes] (set over
    /// `device` by [`sized`]; `None`: the same at every size).
    pub by_size: Option<fn(u64) -> Value>,
}

/// Every preset.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "fios-disksim",
        description:
            "FIOS (ACM TOS 2022) §4.3, §5, Table 2: DiskSim SSD model, 8 KiB pages, 64-page \
                  blocks, 11% over-provisioning, greedy GC; capacity left to the run (the paper's \
                  3 TB volume does not fit)",
        device: || {
            json!({
                "block_size": 8192,
                "segment_blocks": 64,
                "op": 0.11,
            })
        },
        victim: "greedy",
        by_size: None,
    },
    Preset {
        name: "shiro",
        description:
            "Shiro (TCAD'25) Table III at 40-50 GiB: Daisy+ OpenSSD with FEMU's FTL, 16 KiB \
                  pages, superblocks of 64 blocks x 256 pages (16,384 pages), 7% \
                  over-provisioning, foreground GC below 5% free superblocks, a fresh drive (no \
                  prefill); Base and 2R run with cost-benefit (Shiro, SepBIT and MiDAS choose \
                  their own victims). A trace's small footprint gets smaller superblocks (said \
                  in the result); `preset::sized(\"shiro\", bytes)` sizes them by Table \
                  III's rows (256 pages per block up to 50 GiB, 512 to 100 GiB, 1,024 above; \
                  a drive under 40 GiB keeps the 40 GiB drive's 171 superblocks).",
        device: || {
            json!({
                "block_size": 16384,
                "segment_blocks": 16384,
                "op": 0.07,
                "gc_low_fraction": 0.05,
                "prefill": false,
            })
        },
        victim: "cost-benefit",
        by_size: Some(shiro_superblock),
    },
];

/// Superblocks of the 40 GiB drive of Shiro's Table III, kept by smaller drives.
pub const SHIRO_SMALL_SUPERBLOCKS: u64 = 171;

/// Shiro's Table III: a superblock is one block of each of 64 dies, of 256
/// pages up to 50 GiB, 512 up to 100 GiB and 1,024 above; a drive under
/// 40 GiB (not in the table) keeps the 40 GiB drive's 171 superblocks.
fn shiro_superblock(logical_bytes: u64) -> Value {
    const GIB: u64 = 1 << 30;
    let page = 16_384u64;
    let pages = if logical_bytes >= 40 * GIB {
        let per_block = if logical_bytes <= 50 * GIB {
            256
        } else if logical_bytes <= 100 * GIB {
            512
        } else {
            1024
        };
        64 * per_block
    } else {
        ((logical_bytes / page) as f64 * 1.07 / SHIRO_SMALL_SUPERBLOCKS as f64).floor() as u64
    };
    json!({ "segment_blocks": pages.max(1) })
}

impl DeviceConfig {
    /// The preset `name` for a drive of `logical_bytes` ([`sized`]; here,
    /// not in `device.rs`, so the device layer does not import the presets).
    pub fn preset(name: &str, logical_bytes: u64) -> Result<Self> {
        sized(name, logical_bytes)
    }
}

/// Preset `name` for a drive of `logical_bytes`: its fields, the logical
/// size counted in its blocks, and the fields its size sets.
pub fn sized(name: &str, logical_bytes: u64) -> Result<DeviceConfig> {
    let p = find(name)?;
    let mut d = apply(name, &DeviceConfig::default())?;
    d.logical_blocks = logical_bytes / d.block_size as u64;
    if d.logical_blocks == 0 {
        return Err(Error::config(
            "capacity",
            format!(
                "{logical_bytes} bytes is less than one {}-byte block of preset {name}",
                d.block_size
            ),
        ));
    }
    match p.by_size {
        Some(f) => {
            let mut v = serde_json::to_value(&d).expect("a device config serialises");
            if let (Some(obj), Value::Object(set)) = (v.as_object_mut(), f(logical_bytes)) {
                obj.extend(set);
            }
            serde_json::from_value(v).map_err(|e| Error::config("preset", format!("{name}: {e}")))
        }
        None => Ok(d),
    }
}

/// The preset named `name`, or an error listing those that exist.
pub fn find(name: &str) -> Result<&'static Preset> {
    lookup("device preset", PRESETS, name, |p| p.name)
}

/// `base` with the fields of preset `name` set.
pub fn apply(name: &str, base: &DeviceConfig) -> Result<DeviceConfig> {
    let p = find(name)?;
    let mut v = serde_json::to_value(base).expect("a device config serialises");
    if let (Some(obj), Value::Object(set)) = (v.as_object_mut(), (p.device)()) {
        obj.extend(set);
    }
    serde_json::from_value(v).map_err(|e| Error::config("preset", format!("{name}: {e}")))
}

/// Every device preset as JSON: name, description, `device` (the fields
/// it sets), `config` (the whole device it gives, every other field at its
/// default) and `victim`.
pub fn registry() -> Result<Value> {
    PRESETS
        .iter()
        .map(|p| {
            let config = apply(p.name, &DeviceConfig::default())?;
            Ok(
                json!({"name": p.name, "description": p.description, "device": (p.device)(),
                      "config": config, "victim": p.victim}),
            )
        })
        .collect::<Result<Vec<_>>>()
        .map(Value::Array)
}

/// Every preset, device and timing, with its full field set:
/// `{"device": [...]` (see [`registry`]), `"timing": [{"name",
/// "description", "config"}]` (the whole [`crate::timing::SsdConfig`])`}`.
pub fn all_json() -> Result<Value> {
    let timing = crate::timing::config::PRESETS
        .iter()
        .map(|(name, _)| {
            let c = crate::timing::SsdConfig::load(name)?;
            Ok(json!({"name": name, "description": c.description, "config": c}))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"device": registry()?, "timing": timing}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shiro_preset_gives_table_iii() {
        const GIB: u64 = 1 << 30;
        // (GiB, superblocks, superblock pages): Table III.
        for (gib, sbs, pages) in [
            (40, 171, 16_384),
            (50, 214, 16_384),
            (100, 214, 32_768),
            (500, 535, 65_536),
        ] {
            let c = sized("shiro", gib * GIB).unwrap();
            let g = c.geometry().unwrap();
            assert_eq!(
                (g.segments, g.segment_blocks, g.block_size),
                (sbs, pages, 16_384),
                "{gib} GiB"
            );
            assert_eq!((c.gc_low_fraction, c.op), (Some(0.05), 0.07));
            assert!(!c.prefill);
        }
        // A small drive keeps 171 superblocks.
        let g = sized("shiro", GIB).unwrap().geometry().unwrap();
        assert_eq!((g.segments, g.logical_blocks), (171, 65_536));
        // The registry's fields are the sized device's, but for the size.
        let plain = apply("shiro", &DeviceConfig::default()).unwrap();
        let at40 = sized("shiro", 40 * GIB).unwrap();
        assert_eq!(
            (
                plain.block_size,
                plain.segment_blocks,
                plain.op,
                plain.prefill
            ),
            (at40.block_size, at40.segment_blocks, at40.op, at40.prefill)
        );
        let e = sized("nope", GIB).unwrap_err().to_string();
        assert!(e.contains("shiro"), "{e}");
        let e = sized("shiro", 100).unwrap_err().to_string();
        assert!(e.contains("capacity"), "{e}");
    }

    #[test]
    fn fios_preset_is_disksim_geometry() {
        let d = apply("fios-disksim", &DeviceConfig::default()).unwrap();
        assert_eq!((d.block_size, d.segment_blocks, d.op), (8192, 64, 0.11));
        assert_eq!(d.logical_blocks, DeviceConfig::default().logical_blocks);
        d.geometry().unwrap();
        let e = find("fios").err().unwrap().to_string();
        assert!(e.contains("fios-disksim"), "{e}");
    }

    #[test]
    fn every_preset_has_its_full_field_set() {
        let v = all_json().unwrap();
        let fields = crate::device::FIELDS.len();
        for p in v["device"].as_array().unwrap() {
            let c = p["config"].as_object().unwrap();
            assert_eq!(c.len(), fields, "{p}");
            for (k, x) in p["device"].as_object().unwrap() {
                assert_eq!(&c[k], x, "{}: {k}", p["name"]);
            }
            let d: DeviceConfig = serde_json::from_value(p["config"].clone()).unwrap();
            d.geometry().unwrap();
        }
        let t = v["timing"].as_array().unwrap();
        assert_eq!(t.len(), crate::timing::config::PRESETS.len());
        for p in t {
            let c: crate::timing::SsdConfig = serde_json::from_value(p["config"].clone()).unwrap();
            assert_eq!(c.name, p["name"].as_str().unwrap());
        }
    }
}
