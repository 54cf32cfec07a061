//! The replay service a policy gets in [`crate::engine::Placement::prepare`]:
//! the run's request stream, its annotation, and nested replays of the same
//! run under another policy.

use std::sync::Arc;

use serde_json::Value;

use super::config::RunConfig;
use crate::device::Geometry;
use crate::engine::{Placement, Replayed, RunService};
use crate::error::Result;
use crate::future::Annotation;
use crate::request::Request;

/// Where a preparation's events go ([`reporting`]).
type Reporter = Box<dyn FnMut(&str)>;

std::thread_local! {
    /// Where [`Prepared::report`] sends a preparation's events on this
    /// thread ([`reporting`]).
    static REPORTER: std::cell::RefCell<Option<Reporter>> = const { std::cell::RefCell::new(None) };
}

/// Run `body` (building a run: [`super::Simulation::new`]) with `report`
/// receiving its policy's preparation events (NoDaP's search trials, as
/// JSON), so a caller shows progress on a long preparation.
pub fn reporting<T>(report: Reporter, body: impl FnOnce() -> T) -> T {
    let old = REPORTER.with(|r| r.borrow_mut().replace(report));
    let out = body();
    REPORTER.with(|r| *r.borrow_mut() = old);
    out
}

/// A run being built, as its policy sees it: the settled configuration
/// (setup applied, device sized, `writes` known) and its annotation.
pub(crate) struct Prepared<'a> {
    cfg: &'a RunConfig,
    geo: Geometry,
    ann: Option<Arc<Annotation>>,
    nested: Nested,
}

/// A whole replay of a run (the policy built through the wrapper), as
/// the run's own module provides it ([`super::sim`]): the service asks for
/// nested replays without building runs itself.
pub(crate) type Nested = fn(
    RunConfig,
    Option<Arc<Annotation>>,
    &mut dyn FnMut(Box<dyn Placement>) -> Box<dyn Placement>,
) -> Result<Replayed>;

impl<'a> Prepared<'a> {
    /// The service of the run `cfg` on `geo`, annotated by `ann`, replaying
    /// other policies with `nested`.
    pub(crate) fn new(
        cfg: &'a RunConfig,
        geo: Geometry,
        ann: Option<Arc<Annotation>>,
        nested: Nested,
    ) -> Self {
        Prepared {
            cfg,
            geo,
            ann,
            nested,
        }
    }
}

impl RunService for Prepared<'_> {
    fn report(&self, event: &str) {
        REPORTER.with(|r| {
            if let Some(f) = r.borrow_mut().as_mut() {
                f(event);
            }
        });
    }
    fn geometry(&self) -> &Geometry {
        &self.geo
    }
    fn prefill(&self) -> bool {
        self.cfg.device.prefill
    }
    fn writes(&self) -> u64 {
        self.cfg.writes
    }
    fn annotation(&self) -> Option<&Arc<Annotation>> {
        self.ann.as_ref()
    }
    fn requests(&self, f: &mut dyn FnMut(&Request) -> bool) -> Result<()> {
        self.cfg.stream().for_each(f)
    }
    /// The same configuration with another policy, without the accuracy
    /// report (a nested replay scores nothing), reusing the annotation.
    fn replay(
        &self,
        name: &str,
        params: Option<&Value>,
        wrap: &mut dyn FnMut(Box<dyn Placement>) -> Box<dyn Placement>,
    ) -> Result<Replayed> {
        let mut c = self.cfg.clone();
        c.policy = name.to_string();
        if let Some(p) = params {
            c.params = p.clone();
        }
        c.accuracy = false;
        // The outer run's dump is the outer run's.
        c.dump_gc = None;
        (self.nested)(c, self.ann.clone(), wrap)
    }
}
