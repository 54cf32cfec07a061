//! NoDaP's offline configuration search on a whole run configuration
//! (`wafer oracle search`): the stream is annotated once and every trial
//! replays it ([`crate::policy::nodap::search`]).

use std::sync::Arc;

use super::config::RunConfig;
use super::service::Prepared;
use crate::error::Result;
use crate::future::AnnotationInfo;
use crate::policy::nodap::search::{self, Options, SearchResult, Trial};

/// Search NoDaP's group configuration for the stream of `cfg`, calling
/// `progress` after every replay; also says how the annotation was made.
pub fn search(
    cfg: &RunConfig,
    opts: &Options,
    progress: &mut dyn FnMut(&Trial),
) -> Result<(SearchResult, AnnotationInfo)> {
    let mut cfg = cfg.clone();
    cfg.dump_gc = None;
    cfg.resolve()?;
    // The annotation covers the run's real length: drive-writes count in
    // the device's logical blocks, known once the stream is open (a trace's
    // footprint sizes it).
    if cfg.drive_writes.is_some() {
        let (_, geo) = cfg.stream().open()?;
        cfg.settle_length(geo.logical_blocks as u64)?;
    }
    let (ann, info) = cfg.annotate()?;
    let geo = cfg.device.geometry()?;
    let mut r = search::search(
        &Prepared::new(&cfg, geo, Some(Arc::new(ann)), super::sim::nested_replay),
        opts,
        progress,
    )?;
    let mut run = serde_json::to_value(&cfg).unwrap_or_default();
    if let Some(o) = run.as_object_mut() {
        o.remove("policy");
        o.remove("params");
    }
    r.run = run;
    Ok((r, info))
}
