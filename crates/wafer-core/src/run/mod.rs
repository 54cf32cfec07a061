//! The run layer, on top of everything: a replay assembled from its
//! configuration ([`RunConfig`] -> [`Simulation`] -> [`RunResult`]; a
//! timed run's part, the timing driver and its drive's preparation, in
//! `timed.rs`), the peers' conventions ([`setup`]), its memory estimate
//! ([`resources`]), the warnings of its result ([`warnings`]), checkpoint
//! files ([`checkpoint`]), a timed run's saved preconditioning
//! ([`precondition`]), many volumes in one timeline ([`multi`]), the replay
//! service policies get ([`service`]) and NoDaP's search on a configuration
//! ([`oracle`]). No module below imports it (`tests/integration/layers.rs`).

pub mod checkpoint;
pub mod config;
pub mod gc_dump;
pub mod multi;
pub mod oracle;
pub mod precondition;
pub mod resources;
pub mod result;
pub(crate) mod service;
pub mod setup;
pub mod sim;
pub mod spec;
mod timed;
pub mod warnings;

pub use crate::source::{Sizing, TraceConfig, TraceSummary};
pub use config::RunConfig;
pub use result::{EraseStats, GroupResult, LifetimeProfile, RunResult};
pub use service::reporting;
pub use setup::{Conventions, Setup};
pub use sim::Simulation;
pub use spec::RunSpec;
