//! Victim selection: which sealed segment GC collects next. One trait, one
//! file per selector, one registry table. A placement policy may override the
//! choice ([`crate::policy::Placement::select_victim`]); otherwise the
//! configured selector decides.

pub mod adjusted_greedy;
mod cat;
mod cost_benefit;
pub(crate) mod cost_hotness;
mod d_choices;
mod fifo;
mod greedy;
mod lru;
mod multilog;
mod random;
mod random_greedy;
pub mod replayer;
mod window_greedy;

pub use adjusted_greedy::AdjustedGreedy;
pub use cat::Cat;
pub(crate) use cost_benefit::score as cost_benefit_score;
pub(crate) use cost_benefit::sqrt_score as cost_benefit_sqrt_score;
pub use cost_benefit::{CostBenefit, CostBenefitClock, CostBenefitConfig, CostBenefitForm};
pub use cost_hotness::CostHotness;
pub use d_choices::DChoices;
pub use fifo::Fifo;
pub use greedy::Greedy;
pub use lru::Lru;
pub use multilog::MultiLogVictim;
pub use random::Random;
pub use random_greedy::RandomGreedy;
pub use window_greedy::WindowGreedy;

use crate::device::Geometry;
use crate::error::{lookup, Error, Result};
use crate::ftl::{Ftl, GroupId, SegState, SegmentId};

/// What happened to one block, for selectors that follow blocks
/// ([`VictimSelector::tracks_blocks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BlockEvent {
    /// A user write appended the block to the segment.
    UserWrite,
    /// GC appended the block to the segment.
    GcWrite,
    /// The block's copy in the segment became invalid (overwrite or trim),
    /// before any new copy is appended.
    Invalidated,
}

/// A victim selector tracks the sealed segments and picks victims among them.
pub trait VictimSelector: Send {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// A segment was sealed and becomes a candidate.
    fn on_seal(&mut self, seg: SegmentId, ftl: &Ftl);
    /// A block of sealed segment `seg` was invalidated; `valid` is its new count.
    #[inline(always)]
    fn on_invalidate(&mut self, _seg: SegmentId, _valid: u32) {}
    /// Choose the next victim among the sealed segments with at most
    /// `max_valid` valid blocks and stop tracking it; `None` if there is none.
    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId>;
    /// Stop tracking `seg` (a policy chose it as victim itself).
    fn remove(&mut self, seg: SegmentId, ftl: &Ftl);
    /// Bytes of the selector's own state.
    fn memory_bytes(&self) -> usize;
    /// Check the selector's bookkeeping against the FTL (debug mode, tests).
    fn check(&self, _ftl: &Ftl) -> std::result::Result<(), String> {
        Ok(())
    }
    /// Whether the selector follows individual blocks ([`Self::on_block`]);
    /// asked once, so the engine skips the calls for the others.
    fn tracks_blocks(&self) -> bool {
        false
    }
    /// `lba`'s copy in `seg` was written or invalidated (only if
    /// [`Self::tracks_blocks`]). `ftl.now_ns` is the request's time.
    fn on_block(&mut self, _lba: u32, _seg: SegmentId, _ev: BlockEvent, _ftl: &Ftl) {}
    /// Whether the selector chooses within a group the placement policy
    /// names ([`crate::policy::Placement::victim_group`]); asked once.
    fn needs_policy_group(&self) -> bool {
        false
    }
    /// The group the policy named for the next choice (`None`: it named none).
    fn set_policy_group(&mut self, _group: Option<GroupId>) {}
    /// Whether the selector scores by a placement policy's
    /// [`VictimHint`]: the engine then asks the policy before each choice
    /// ([`crate::policy::Placement::victim_hint`]) and passes the answer
    /// to [`VictimSelector::set_hint`]. Asked once, at construction.
    fn wants_hint(&self) -> bool {
        false
    }
    /// The policy's hint for the next choice (`None`: it gives none).
    fn set_hint(&mut self, _hint: Option<VictimHint>) {}
    /// The selector's complete state for a checkpoint ([`crate::checkpoint`]).
    fn save_state(&self) -> crate::error::Result<Vec<u8>> {
        Err(crate::codec::unsupported(self.name()))
    }
    /// Replace the state of this selector (built from the same
    /// configuration) by one saved with [`VictimSelector::save_state`].
    fn load_state(&mut self, _bytes: &[u8]) -> crate::error::Result<()> {
        Err(crate::codec::unsupported(self.name()))
    }
}

/// What a placement policy tells a victim selector that needs it (Shiro's
/// Adjusted Greedy, Eq. 1): its lifetime threshold and which groups hold
/// blocks it predicted to die within that threshold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VictimHint {
    /// The lifetime threshold T [user blocks].
    pub threshold: u64,
    /// Groups of blocks predicted short-lived (bit g = group g; groups 64
    /// and up cannot be named).
    pub short_groups: u64,
}

impl VictimHint {
    /// Whether group `g` holds blocks predicted short-lived.
    #[inline(always)]
    pub fn is_short(&self, g: crate::ftl::GroupId) -> bool {
        g < 64 && self.short_groups >> g & 1 == 1
    }
}

/// The replayer's candidates hold at least one invalid block
/// (`filterEmptySegments` in `SelectionAlgorithm.java`) and at most
/// `max_valid` valid blocks: the bound its list-based selectors use.
#[inline]
pub(crate) fn replayer_bound(ftl: &Ftl, max_valid: u32) -> u32 {
    max_valid.min(ftl.geo.segment_blocks - 1)
}

/// The sealed segments with at most `max_valid` valid blocks that `keep`
/// accepts, in id order, into `out` (cleared first): the candidate list of
/// the replayer's list-based selectors (pass [`replayer_bound`]).
pub(crate) fn eligible(
    ftl: &Ftl,
    max_valid: u32,
    keep: impl Fn(usize) -> bool,
    out: &mut Vec<SegmentId>,
) {
    out.clear();
    out.extend(
        ftl.segs
            .state
            .iter()
            .zip(&ftl.segs.valid)
            .enumerate()
            .filter(|&(s, (&st, &v))| st == SegState::Sealed && v <= max_valid && keep(s))
            .map(|(s, _)| s as SegmentId),
    );
}

/// The sealed segment with at most `max_valid` valid blocks that maximises
/// `score(u, age, erases)` (valid ratio, logical time since sealing + 1,
/// erase count); a segment with no valid block is taken at once. One scan of
/// the segment table, shared by the score-based selectors.
pub(crate) fn best_by_score(
    ftl: &Ftl,
    max_valid: u32,
    score: impl Fn(f64, f64, u32) -> f64,
) -> Option<SegmentId> {
    let [best] = top_by_score::<1>(ftl, max_valid, |_| true, score);
    best.map(|(_, s)| s)
}

/// The `K` best segments by [`best_by_score`]'s rule among those `keep`
/// accepts, best first (a policy scanning its own group). Empty segments
/// come first in id order, and the scan stops once `K` are found; equal
/// scores keep id order.
pub(crate) fn top_by_score<const K: usize>(
    ftl: &Ftl,
    max_valid: u32,
    keep: impl Fn(usize) -> bool,
    score: impl Fn(f64, f64, u32) -> f64,
) -> [Option<(f64, SegmentId)>; K] {
    let blocks = ftl.geo.segment_blocks as f64;
    let mut top: [Option<(f64, SegmentId)>; K] = [None; K];
    let mut empties = 0;
    for (seg, (&state, &valid)) in ftl.segs.state.iter().zip(&ftl.segs.valid).enumerate() {
        if state != crate::ftl::SegState::Sealed || valid > max_valid || !keep(seg) {
            continue;
        }
        if valid == 0 {
            top.copy_within(empties..K - 1, empties + 1);
            top[empties] = Some((f64::INFINITY, seg as SegmentId));
            empties += 1;
            if empties == K {
                break;
            }
            continue;
        }
        let age = (ftl.now - ftl.segs.seal_time[seg]) as f64 + 1.0;
        let x = score(valid as f64 / blocks, age, ftl.segs.erase_count[seg]);
        if let Some(i) = (empties..K).find(|&i| top[i].is_none_or(|(b, _)| x > b)) {
            top.copy_within(i..K - 1, i + 1);
            top[i] = Some((x, seg as SegmentId));
        }
    }
    top
}

/// How a selector breaks ties and orders its candidates: wafer's own way,
/// or as a peer does (a setup's convention).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VictimTies {
    /// wafer's: greedy takes the segment that reached its valid count
    /// first, the scanning selectors the lowest segment id, the random ones
    /// wafer's generator over segments in id order.
    #[default]
    Wafer,
    /// SepBIT's replayer's: `greedy`, `cost-benefit`, `lru`,
    /// `window-greedy`, `random`, `random-greedy` and `multilog` sort (or
    /// draw from, with `java.util.Random` seeded by the run's seed) the
    /// candidates in its hash map's order ([`replayer`]), so equal scores
    /// go as there.
    Replayer,
}

/// What a selector is built from.
#[derive(Clone, Copy, Debug)]
pub struct SelectorArgs<'a> {
    /// Device shape.
    pub geo: &'a Geometry,
    /// The option after `name:`, if any.
    pub opt: Option<u32>,
    /// The run's seed.
    pub seed: u64,
    /// Form and clock of `cost-benefit`.
    pub cost_benefit: CostBenefitConfig,
    /// Tie order and candidate order.
    pub ties: VictimTies,
    /// The replayer's open segments per log at start (its
    /// `--setNumOpenSegments`, the policy's class count), for the hash
    /// order of [`replayer`].
    pub classes: u32,
}

impl SelectorArgs<'_> {
    /// The replayer's `algo` under `name` if the ties are the replayer's,
    /// else `own`.
    fn replayer_or(
        &self,
        algo: replayer::Algorithm,
        name: &'static str,
        own: impl FnOnce() -> Box<dyn VictimSelector>,
    ) -> Box<dyn VictimSelector> {
        match self.ties {
            VictimTies::Replayer => Box::new(replayer::Replayer::new(algo, name, self)),
            VictimTies::Wafer => own(),
        }
    }
}

/// A registered victim selector.
pub struct SelectorInfo {
    /// Name used by the CLI and the Python API.
    pub name: &'static str,
    /// One line for `wafer policies`.
    pub description: &'static str,
    /// Constructor.
    pub build: fn(&SelectorArgs) -> Box<dyn VictimSelector>,
}

/// Every victim selector, by name.
pub const SELECTORS: &[SelectorInfo] = &[
    SelectorInfo {
        name: "greedy",
        description: "fewest valid blocks first; O(1) per update and amortised O(1) per choice (bucket lists)",
        build: |a| a.replayer_or(replayer::Algorithm::Greedy, "greedy", || Box::new(Greedy::new(a.geo))),
    },
    SelectorInfo {
        name: "cost-benefit",
        description: "LFS cost-benefit (Rosenblum & Ousterhout): max (1-u)*age/(1+u), age since sealing; \
                      --cost-benefit sqrt: (1-u)/u*sqrt(age) (SepBIT's replayer, MiDAS-Simulation)",
        build: |a| {
            a.replayer_or(replayer::Algorithm::CostBenefit, "cost-benefit", || {
                Box::new(CostBenefit::new(a.cost_benefit, a.geo))
            })
        },
    },
    SelectorInfo {
        name: "fifo",
        description: "oldest sealed segment first (log order, LRW)",
        build: |a| Box::new(Fifo::new(a.geo)),
    },
    SelectorInfo {
        name: "cat",
        description: "Cost-Age-Times (Chiang et al.): min u/(1-u) x 1/age x erases; wear-aware",
        build: |_| Box::new(Cat),
    },
    SelectorInfo {
        name: "adjusted-greedy",
        description: "Shiro's Adjusted Greedy (Eq. 1): max invalid ratio I, discounted to I/(1+V·T/C) for segments of the policy's short-lived groups (T its threshold, C the blocks written since sealing); greedy without a policy hint",
        build: |_| Box::new(AdjustedGreedy::default()),
    },
    SelectorInfo {
        name: "d-choices",
        description: "randomized greedy (Van Houdt): fewest valid of d random sealed segments; d-choices:D, d = 10",
        build: |a| Box::new(DChoices::new(a.opt.unwrap_or(10), a.geo.segments, a.seed)),
    },
    SelectorInfo {
        name: "random",
        description: "a uniformly random eligible segment (SepBIT's replayer, Random)",
        build: |a| a.replayer_or(replayer::Algorithm::Random, "random", || Box::new(Random::new(a.seed))),
    },
    SelectorInfo {
        name: "random-greedy",
        description: "fewest valid of a random 20% (at least 2) of the eligible segments (SepBIT's replayer, RandomGreedy)",
        build: |a| {
            a.replayer_or(replayer::Algorithm::RandomGreedy, "random-greedy", || {
                Box::new(RandomGreedy::new(a.seed))
            })
        },
    },
    SelectorInfo {
        name: "window-greedy",
        description: "fewest valid among the oldest 90% of the eligible segments (SepBIT's replayer, WindowGreedy)",
        build: |a| {
            a.replayer_or(replayer::Algorithm::WindowGreedy, "window-greedy", || {
                Box::new(WindowGreedy::default())
            })
        },
    },
    SelectorInfo {
        name: "lru",
        description: "least recently appended segment first (SepBIT's replayer, Lru)",
        build: |a| a.replayer_or(replayer::Algorithm::Lru, "lru", || Box::new(Lru)),
    },
    SelectorInfo {
        name: "cost-hotness",
        description: "SFS (Min et al., FAST'12): max (1-u)/(u x hotness), hotness from its blocks' write counts and ages",
        build: |a| Box::new(CostHotness::new(a.geo)),
    },
    SelectorInfo {
        name: "multilog",
        description: "MultiLog (Stoica & Ailamaki, VLDB'13): LRU within the class its model picks (with --policy multilog; plain LRU otherwise)",
        build: |a| {
            a.replayer_or(replayer::Algorithm::MultiLog, "multilog", || {
                Box::new(MultiLogVictim::default())
            })
        },
    },
    SelectorInfo {
        name: "basic",
        description: "SepBIT's replayer's Basic: no ordering, the first eligible segment in its hash map's order (segments numbered as it opens them)",
        build: |a| Box::new(replayer::Replayer::new(replayer::Algorithm::Basic, "basic", a)),
    },
];

/// Build the selector registered under `name` (`name:N` passes option N,
/// e.g. `d-choices:4`), seeded from `seed`, with LFS's cost-benefit.
pub fn build(name: &str, geo: &Geometry, seed: u64) -> Result<Box<dyn VictimSelector>> {
    build_with(name, geo, seed, CostBenefitConfig::default())
}

/// As [`build`], with the cost-benefit form and clock `cost_benefit`.
pub fn build_with(
    name: &str,
    geo: &Geometry,
    seed: u64,
    cost_benefit: CostBenefitConfig,
) -> Result<Box<dyn VictimSelector>> {
    build_run(
        name,
        geo,
        seed,
        cost_benefit,
        VictimTies::Wafer,
        REPLAYER_CLASSES,
    )
}

/// The replayer's open segments per log in every run wafer compared it with
/// (`--setNumOpenSegments 6`).
pub const REPLAYER_CLASSES: u32 = 6;

/// As [`build_with`], with the tie order `ties` and, for the replayer's
/// hash order, its open segments per log `classes`.
pub fn build_run(
    name: &str,
    geo: &Geometry,
    seed: u64,
    cost_benefit: CostBenefitConfig,
    ties: VictimTies,
    classes: u32,
) -> Result<Box<dyn VictimSelector>> {
    let (base, opt) = match name.split_once(':') {
        Some((b, o)) => {
            let n = o
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| Error::Parameter {
                    policy: b.to_string(),
                    reason: format!(
                        "option '{o}' of victim selector '{b}' must be an integer >= 1"
                    ),
                })?;
            (b, Some(n))
        }
        None => (name, None),
    };
    lookup("victim selector", SELECTORS, base, |s| s.name).map(|s| {
        (s.build)(&SelectorArgs {
            geo,
            opt,
            seed,
            cost_benefit,
            ties,
            classes,
        })
    })
}
