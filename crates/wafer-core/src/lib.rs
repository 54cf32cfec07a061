//! wafer-core: the engine of wafer, a trace-driven simulator of a flash
//! translation layer (FTL) / log-structured store that measures write
//! amplification (WAF) under data-placement policies.
//!
//! Layers, bottom up:
//! * [`device`]: geometry and configuration of the simulated device, with
//!   the papers' devices by name in [`preset`];
//! * [`ftl`]: page-level mapping, segments, groups, the GC loop, statistics;
//! * [`victim`]: victim selection (greedy, cost-benefit, FIFO) behind one trait;
//! * [`policy`]: placement policies behind one trait and one registry table,
//!   with per-LBA / per-chunk trackers they share in [`features`];
//! * [`workload`]: seeded synthetic request generators and their spec strings;
//! * [`future`]: lifetime annotation (when each block dies), oracle support
//!   and prediction accuracy;
//! * [`model`]: hot-path inference kernels (MLP, GRU, LSTM, TCN) and
//!   safetensors weights for the learned policies;
//! * [`sim`]: a replay = device + policy + victim selector + request source;
//!   [`multi`]: many volumes, each its own log, in one timeline;
//! * [`setup`]: the conventions of peer simulators, set at once.
//! * [`timing`]: timing mode, a discrete-event SSD model (latency,
//!   throughput, energy) driven by the same FTL.
//!
//! Logical time is the number of user-written blocks so far, as in the papers.
#![warn(missing_docs)]

pub mod checkpoint;
pub mod device;
pub mod divisor;
pub mod error;
pub mod features;
pub mod ftl;
pub mod future;
pub(crate) mod huge;
pub mod model;
pub mod multi;
pub mod params;
pub mod policy;
pub mod preset;
pub mod request;
pub mod resources;
pub mod rng;
pub mod setup;
pub mod sim;
pub mod source;
pub mod timing;
pub mod trace;
pub mod victim;
pub mod warnings;
pub mod workload;

pub use device::{BackgroundGc, DeviceConfig, GarbageAccounting, GcCheck, GcMode, Geometry};
pub use error::{Error, Result};
pub use request::{Op, Request};
pub use setup::Setup;
pub use sim::{RunConfig, RunResult, Simulation};
