//! wafer-core: the engine of wafer, a trace-driven simulator of a flash
//! translation layer (FTL) / log-structured store that measures write
//! amplification (WAF).
//!
//! Layers, bottom up; a module imports only modules of its own layer and
//! of the layers below it (`tests/integration/layers.rs` holds this list as
//! a table and checks every import against it):
//! * basics: [`error`], [`request`], [`rng`], [`params`], [`interrupt`], [`codec`] (how
//!   state is encoded for checkpoints), [`divisor`], [`prefetch`], [`huge`]
//!   (large tables on huge pages), [`host`] (memory and disk left);
//! * inputs: [`device`] (geometry and configuration), [`trace`] (readers),
//!   [`workload`] (seeded synthetic generators), [`model`] (hot-path
//!   inference kernels and safetensors weights); [`source`] makes a request
//!   stream of a trace or a workload; [`future`] annotates when each block
//!   dies (oracles, prediction accuracy);
//! * [`ftl`]: page-level mapping, segments, groups and the engine's
//!   statistics; [`victim`]: victim selection behind one trait;
//! * [`engine`]: the FTL driven by a placement policy and a victim selector
//!   (the GC loop), with the placement vocabulary it drives
//!   ([`engine::Placement`]) and the service a policy may ask of its run
//!   ([`engine::RunService`]);
//! * [`features`]: per-LBA / per-chunk trackers the policies share;
//!   [`policy`]: the placement policies, their shared kit and their registry;
//! * [`timing`]: timing mode, a discrete-event SSD model (latency,
//!   throughput, energy) around the same engine; [`preset`]: the papers'
//!   devices by name, and every preset, device and timing, in one listing
//!   (it reads the timing presets, so it sits here, not with `device`);
//! * [`run`]: a replay = device + policy + victim selector + request source
//!   (+ timing), its setups, resources, warnings, checkpoint files and
//!   multi-volume runs: the only layer that knows a whole [`RunConfig`].
//!
//! Logical time is the number of user-written blocks so far, as in the papers.
#![warn(missing_docs)]

pub mod codec;
pub mod device;
pub mod divisor;
pub mod engine;
pub mod error;
pub mod features;
pub mod ftl;
pub mod future;
pub mod host;
pub(crate) mod huge;
pub mod interrupt;
pub mod model;
pub mod params;
pub mod policy;
pub(crate) mod prefetch;
pub mod preset;
pub mod request;
pub mod rng;
pub mod run;
pub mod source;
pub mod timing;
pub mod trace;
pub mod victim;
pub mod workload;

pub use device::{
    BackgroundGc, DeviceConfig, GarbageAccounting, GcCheck, GcMode, Geometry, PlacementBatch,
};
pub use error::{Error, Result};
pub use request::{Op, Request};
pub use run::{RunConfig, RunResult, Setup, Simulation};
