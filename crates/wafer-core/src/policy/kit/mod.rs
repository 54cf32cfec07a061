//! The policy kit: the tools several placement policies share, each in a
//! module named for what it does, so that a policy's own file holds only
//! that policy and its variants, and a change to one policy moves no other
//! policy's numbers. A change here moves those of every user listed.

/// `classes` range check (dac, eti, fadac, fk, gw, multilog, multiqueue,
/// sfr, sfs, uw, warcip) and the `classes`-only parameters (dac, fk, sfs).
pub(crate) mod classes;
/// Desnoyers' FIFO WAF model (midas, dogi).
pub(crate) mod fifo_waf;
/// Weighted K-means (the dictionaries of fios and ofios, vstream, lstm-km;
/// the Python binding).
pub mod kmeans;
/// ℓ, the mean lifespan of collected segments (sepbit and its variants, uw, gw).
pub(crate) mod lifespan;
/// The replayer's valid-block count (sepbit, uw, fadac, multilog).
pub(crate) mod log_valid;
/// Online training around a model (dogi, ml-dt, and the page classifier).
pub(crate) mod online;
/// Shiro's page classifier (shiro, shiro-ng, phftl).
pub mod page_classifier;
/// The replayer's FIFO of recent user writes (sepbit, uw).
pub(crate) mod recent_writes;
/// Training samples of the learned policies (dogi, ml-dt, the page classifier).
pub(crate) mod sampler;
/// Sealed segments per group in seal order (nodap, dogi).
pub(crate) mod sealed;
/// The multi-stream SSD model of the stream policies and their windows
/// (fios, ofios, vstream, lstm-km; the run layer's open-stream limit).
pub mod streams;
