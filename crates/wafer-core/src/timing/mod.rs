//! Timing mode (issue 20): the SSD's configuration and presets, its
//! physical layout, the event queue and latency histograms.

pub mod config;
pub mod events;
pub mod hist;
pub mod layout;

pub use config::SsdConfig;
