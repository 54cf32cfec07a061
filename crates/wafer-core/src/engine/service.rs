//! What a policy may ask of the run it is prepared for (docs/ARCHITECTURE.md,
//! "Layers of the engine"): the run's request stream and its span, its annotated future,
//! and replays of the same stream under another policy (NoDaP's search, the
//! oracle assists, `nodap+POLICY-user`). The run layer implements it
//! ([`crate::run`]); a policy never sees the run's configuration.

use std::sync::Arc;

use serde_json::Value;

use super::Placement;
use crate::device::Geometry;
use crate::error::Result;
use crate::ftl::stats::GroupResult;
use crate::future::Annotation;
use crate::model::train::TrainingStats;
use crate::request::Request;
pub use crate::source::Span;

/// The run a policy is prepared for (see [`Placement::prepare`]).
pub trait RunService {
    /// The device's shape.
    fn geometry(&self) -> &Geometry;
    /// Whether the device is prefilled before the workload (the stream's
    /// logical clock then starts after `logical_blocks` writes).
    fn prefill(&self) -> bool;
    /// User blocks the run writes [blocks] (the stream is cut there).
    fn writes(&self) -> u64;
    /// The annotation of the run's request stream (each block's death),
    /// when the run has one (oracles, `accuracy`).
    fn annotation(&self) -> Option<&Arc<Annotation>>;
    /// Visit, in order, the requests the replay applies after its prefill,
    /// cut where the replay cuts them; `f` returns false to stop early.
    fn requests(&self, f: &mut dyn FnMut(&Request) -> bool) -> Result<()>;
    /// One pass over the stream: its first and last timestamps, writes and
    /// requests.
    fn span(&self) -> Result<Span> {
        let mut s = Span::default();
        self.requests(&mut |r| {
            s.add(r);
            true
        })?;
        Ok(s)
    }
    /// Replay this run (same device, stream, annotation, seed, conventions)
    /// with the policy `policy` built from `params` (`None`: the run's own
    /// parameters) and handed to `wrap` before it runs (a policy that records
    /// what the inner one does; `&mut |p| p` for none).
    fn replay(
        &self,
        policy: &str,
        params: Option<&Value>,
        wrap: &mut dyn FnMut(Box<dyn Placement>) -> Box<dyn Placement>,
    ) -> Result<Replayed>;
    /// Tell whoever builds the run how a long preparation goes (one JSON
    /// object per event, e.g. each of NoDaP's search trials): the CLI's
    /// progress line. Nothing by default.
    fn report(&self, _event: &str) {}
}

/// What a nested replay ([`RunService::replay`]) tells the policy that asked.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// (user + GC) / user over the workload (the run's `waf`).
    pub waf: Option<f64>,
    /// WAF after the warm-up (the run's `steady_waf`).
    pub steady_waf: Option<f64>,
    /// Per-group figures (the run's `groups`).
    pub groups: Vec<GroupResult>,
    /// The policy's run-time decisions (the run's `policy_state`).
    pub policy_state: Option<Value>,
    /// What the policy's online training did (the run's `training`).
    pub training: Option<TrainingStats>,
}
