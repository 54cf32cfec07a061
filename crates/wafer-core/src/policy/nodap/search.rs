//! NoDaP's offline group-configuration search (DOGI §3.1): replay the run's
//! request stream under candidate configurations and keep the one with the
//! lowest WAF, adding groups from N = 2 until one more gains less than
//! `min_gain`. Every trial reuses one lifetime annotation.
//!
//! Per N: the BIR bounds (N = 2: every grid value; N + 1: the best N's bounds
//! plus every grid value inserted, then each bound moved one grid step while
//! that helps), then the sizes (caps at ¾ and ½ of each non-last group's
//! measured mean size, kept when they lower WAF). The grid doubles from one
//! segment's blocks up to the length of the stream.

use serde::Serialize;
use serde_json::json;

use crate::engine::RunService;
use crate::error::{Error, Result};
use crate::future::Annotation;

/// Search options.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Options {
    /// Stop when one more group lowers WAF by less than this fraction.
    pub min_gain: f64,
    /// Most groups tried.
    pub max_groups: usize,
}

impl Default for Options {
    /// NoDaP's own defaults (its parameters' `min_gain`, `max_groups`).
    fn default() -> Self {
        let p = super::Params::default();
        Options {
            min_gain: p.min_gain,
            max_groups: p.max_groups,
        }
    }
}

/// One replay of the search.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Trial {
    /// Groups.
    pub groups: usize,
    /// BIR upper bounds [user blocks].
    pub birs: Vec<u64>,
    /// Size caps [segments] (empty: none).
    pub sizes: Vec<u32>,
    /// Steady-state WAF (whole-run WAF if the run ended in warm-up);
    /// `null` if the configuration could not run (e.g. too many groups for
    /// the over-provisioning).
    pub waf: Option<f64>,
    /// Mean sealed segments per group.
    #[serde(skip)]
    pub mean_sealed: Vec<f64>,
}

/// The best configuration for one group count.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PerGroups {
    /// Groups.
    pub groups: usize,
    /// BIR upper bounds [user blocks].
    pub birs: Vec<u64>,
    /// Size caps [segments].
    pub sizes: Vec<u32>,
    /// Its WAF.
    pub waf: f64,
}

/// What the search found: `birs` and `sizes` are a reusable NoDaP
/// configuration (`--param config=FILE`).
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct SearchResult {
    /// Groups chosen.
    pub groups: usize,
    /// BIR upper bounds [user blocks].
    pub birs: Vec<u64>,
    /// Size caps [segments] (0: none).
    pub sizes: Vec<u32>,
    /// WAF of the chosen configuration.
    pub waf: f64,
    /// Why the search stopped.
    pub stopped: String,
    /// The best configuration of each group count tried.
    pub per_groups: Vec<PerGroups>,
    /// The bound grid [user blocks].
    pub candidates: Vec<u64>,
    /// Every replay, in order.
    pub trials: Vec<Trial>,
    /// The replay searched on (policy and params aside), as the caller
    /// describes it (`null` for a search run inside a replay).
    #[serde(with = "crate::codec::as_json")]
    pub run: serde_json::Value,
}

struct Searcher<'a> {
    run: &'a dyn RunService,
    trials: Vec<Trial>,
    progress: &'a mut dyn FnMut(&Trial),
    /// Why the first candidate that could not run failed (said when none
    /// could).
    first_error: Option<String>,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Best {
    birs: Vec<u64>,
    sizes: Vec<u32>,
    waf: f64,
    mean_sealed: Vec<f64>,
}

impl Searcher<'_> {
    fn eval(&mut self, birs: &[u64], sizes: &[u32]) -> Result<Option<Best>> {
        crate::interrupt::check()?;
        let params = json!({"birs": birs, "sizes": sizes, "search": false});
        let outcome = self.run.replay("nodap", Some(&params), &mut |p| p);
        let (waf, mean_sealed) = match outcome {
            Ok(r) => {
                let mean = r
                    .policy_state
                    .as_ref()
                    .and_then(|s| s.get("mean_sealed_segments"))
                    .and_then(|m| serde_json::from_value(m.clone()).ok())
                    .unwrap_or_default();
                (r.steady_waf.or(r.waf), mean)
            }
            // A configuration the device cannot hold (too many groups for its
            // spare segments, or GC that cannot free space) is a losing candidate.
            Err(e @ (Error::Simulation(_) | Error::Config { .. })) => {
                self.first_error.get_or_insert_with(|| e.to_string());
                (None, Vec::new())
            }
            Err(e) => return Err(e),
        };
        let t = Trial {
            groups: birs.len() + 1,
            birs: birs.to_vec(),
            sizes: sizes.to_vec(),
            waf,
            mean_sealed: mean_sealed.clone(),
        };
        (self.progress)(&t);
        self.trials.push(t);
        Ok(waf.map(|waf| Best {
            birs: birs.to_vec(),
            sizes: sizes.to_vec(),
            waf,
            mean_sealed,
        }))
    }

    /// Keep the better of `best` and the trial of `birs`/`sizes`.
    fn try_config(&mut self, best: &mut Option<Best>, birs: &[u64], sizes: &[u32]) -> Result<bool> {
        let cand = self.eval(birs, sizes)?;
        let better = matches!((&cand, &*best), (Some(c), Some(b)) if c.waf < b.waf)
            || (cand.is_some() && best.is_none());
        if better {
            *best = cand;
        }
        Ok(better)
    }

    /// Move each bound one grid step while that lowers WAF.
    fn refine(&mut self, best: &mut Best, grid: &[u64]) -> Result<()> {
        for i in 0..best.birs.len() {
            for step in [-1i64, 1] {
                let pos = grid.iter().position(|&g| g == best.birs[i]);
                let Some(j) = pos.map(|p| p as i64 + step) else {
                    continue;
                };
                if j < 0 || j as usize >= grid.len() {
                    continue;
                }
                let v = grid[j as usize];
                let lo_ok = i == 0 || best.birs[i - 1] < v;
                let hi_ok = i + 1 == best.birs.len() || v < best.birs[i + 1];
                if !(lo_ok && hi_ok) {
                    continue;
                }
                let mut birs = best.birs.clone();
                birs[i] = v;
                let mut slot = Some(best.clone());
                if self.try_config(&mut slot, &birs, &best.sizes.clone())? {
                    *best = slot.expect("kept");
                }
            }
        }
        Ok(())
    }

    /// Try caps at ¾ and ½ of each non-last group's mean size.
    fn sizes(&mut self, best: &mut Best) -> Result<()> {
        let n = best.birs.len() + 1;
        for g in 0..n - 1 {
            let mean = best.mean_sealed.get(g).copied().unwrap_or(0.0);
            for f in [0.75, 0.5] {
                let cap = (mean * f).round() as u32;
                if cap == 0 {
                    continue;
                }
                let mut sizes = if best.sizes.is_empty() {
                    vec![0; n]
                } else {
                    best.sizes.clone()
                };
                sizes[g] = cap;
                let mut slot = Some(best.clone());
                if self.try_config(&mut slot, &best.birs.clone(), &sizes)? {
                    let mean_before = best.mean_sealed.clone();
                    *best = slot.expect("kept");
                    // Later caps are fractions of the uncapped sizes.
                    best.mean_sealed = mean_before;
                    break;
                }
            }
        }
        Ok(())
    }
}

/// Candidate BIR bounds: one segment's blocks, doubling, below the stream's
/// length (prefill included).
pub fn grid(run: &dyn RunService, ann: &Annotation) -> Vec<u64> {
    let geo = run.geometry();
    let prefill = if run.prefill() {
        geo.logical_blocks as u64
    } else {
        0
    };
    let horizon = prefill + run.writes().min(ann.writes());
    let mut v = Vec::new();
    let mut c = geo.segment_blocks as u64;
    while c < horizon {
        v.push(c);
        c *= 2;
    }
    if v.is_empty() {
        v.push(geo.segment_blocks as u64);
    }
    v
}

/// Search NoDaP's group configuration for the stream of `run` (by its
/// annotation), calling `progress` after every replay.
pub fn search(
    run: &dyn RunService,
    opts: &Options,
    progress: &mut dyn FnMut(&Trial),
) -> Result<SearchResult> {
    if !(2..=super::MAX_GROUPS).contains(&opts.max_groups) {
        return Err(Error::config(
            "max_groups",
            format!(
                "must be in 2..={}, got {}",
                super::MAX_GROUPS,
                opts.max_groups
            ),
        ));
    }
    let ann = run.annotation().ok_or_else(|| {
        Error::Simulation("NoDaP's search needs the run's annotated future".into())
    })?;
    let grid = grid(run, ann);
    let mut s = Searcher {
        run,
        trials: Vec::new(),
        progress,
        first_error: None,
    };
    let mut best: Option<Best> = None;
    for &c in &grid {
        s.try_config(&mut best, &[c], &[])?;
    }
    let Some(mut best) = best else {
        return Err(Error::Simulation(format!(
            "no two-group NoDaP configuration can run on this device; the first candidate (BIR {} \
             blocks) failed with: {}",
            grid[0],
            s.first_error.as_deref().unwrap_or("no result")
        )));
    };
    s.sizes(&mut best)?;
    let mut per_groups = vec![per(&best)];
    let stopped = loop {
        let n = best.birs.len() + 1;
        if best.waf <= 1.0 + 1e-9 {
            break format!("WAF 1 reached with {n} groups");
        }
        if n >= opts.max_groups {
            break format!("max_groups ({}) reached", opts.max_groups);
        }
        let mut next: Option<Best> = None;
        for &c in grid.iter().filter(|c| !best.birs.contains(c)) {
            let mut birs = best.birs.clone();
            birs.push(c);
            birs.sort_unstable();
            s.try_config(&mut next, &birs, &[])?;
        }
        let Some(mut next) = next else {
            break format!("no {} -group configuration can run", n + 1);
        };
        s.refine(&mut next, &grid)?;
        s.sizes(&mut next)?;
        per_groups.push(per(&next));
        let gain = (best.waf - next.waf) / best.waf;
        if gain < opts.min_gain {
            break format!(
                "{} groups lower WAF by {:.1}% (< {:.1}%)",
                n + 1,
                gain * 100.0,
                opts.min_gain * 100.0
            );
        }
        best = next;
    };
    Ok(SearchResult {
        groups: best.birs.len() + 1,
        birs: best.birs,
        sizes: best.sizes,
        waf: best.waf,
        stopped,
        per_groups,
        candidates: grid,
        trials: s.trials,
        run: serde_json::Value::Null,
    })
}

fn per(b: &Best) -> PerGroups {
    PerGroups {
        groups: b.birs.len() + 1,
        birs: b.birs.clone(),
        sizes: b.sizes.clone(),
        waf: b.waf,
    }
}
