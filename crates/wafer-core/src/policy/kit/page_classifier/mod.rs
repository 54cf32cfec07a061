//! Shiro's page classifier (TCAD'25 §III-B, §III-D, §V-E): the GRU over
//! per-write hex-digit features, its threshold T (Algorithm 1) and its
//! parameters, shared by `shiro`, `shiro-ng` and `phftl` (Shiro is the
//! journal version of PHFTL, DAC'23).

pub mod classifier;
pub mod features;
pub mod params;
pub mod threshold;
