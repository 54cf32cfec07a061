//! Per-LBA and per-chunk state that several policies need, kept by the
//! policies that use it (so the engine pays nothing when no policy does).

mod last_write;
pub mod request;

pub use last_write::LastWrite;
