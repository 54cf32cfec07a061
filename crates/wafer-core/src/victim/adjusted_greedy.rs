//! Adjusted Greedy victim selection, Shiro (Sun et al., IEEE TCAD 2025,
//! §III-C, Eq. 1): the sealed segment with the highest score
//!
//! ```text
//! score = I / (1 + V·T/C)   for a segment of blocks predicted short-lived
//!       = I                 for every other segment
//! ```
//!
//! where I and V are the segment's invalid and valid proportions (I + V =
//! 1), T is the placement policy's lifetime threshold and C the blocks
//! written since the segment was sealed (C ≥ 1), both in user-written
//! blocks. The discount makes a young segment of short-lived blocks wait
//! (its valid blocks may still die); an old one gets little discount, so the
//! blocks it still holds, probably mispredicted, are collected and moved.
//!
//! The policy supplies T and which of its groups hold short-lived blocks
//! through [`VictimHint`] (Shiro's SHORT group; any policy may give one).
//! Without a hint every segment scores I: plain greedy, by a scan.
//!
//! One scan of the segment table per choice (like cost-benefit); ties keep
//! the lowest segment id; a segment with no valid block is taken at once.

use super::{VictimHint, VictimSelector};
use crate::ftl::{Ftl, SegState, SegmentId};

/// Eq. 1's score of a segment with invalid proportion `i` (valid `1 - i`),
/// sealed `c` user blocks ago, under threshold `t`; `short` says whether
/// it holds blocks predicted short-lived.
#[inline(always)]
pub fn score(i: f64, t: u64, c: u64, short: bool) -> f64 {
    if short {
        i / (1.0 + (1.0 - i) * t as f64 / c.max(1) as f64)
    } else {
        i
    }
}

/// The sealed segment with at most `max_valid` valid blocks that scores
/// highest by Eq. 1 under `hint` (greedy without one).
///
/// A segment's score never exceeds its I (the discount divides by at least
/// 1, and rounding keeps that order), so a segment whose I cannot beat the
/// best score so far is passed over without computing its score: the same
/// choice as scoring every segment, with a division only for the few that
/// might win.
pub fn select(ftl: &Ftl, max_valid: u32, hint: Option<&VictimHint>) -> Option<SegmentId> {
    let blocks = ftl.geo.segment_blocks as f64;
    let segs = &ftl.segs;
    let mut best: Option<(f64, SegmentId)> = None;
    let mut bar = f64::NEG_INFINITY;
    for (s, (&state, &valid)) in segs.state.iter().zip(&segs.valid).enumerate() {
        if state != SegState::Sealed || valid > max_valid {
            continue;
        }
        if valid == 0 {
            return Some(s as SegmentId);
        }
        let i = 1.0 - valid as f64 / blocks;
        if i <= bar {
            continue;
        }
        let x = match hint {
            Some(h) if h.is_short(segs.group[s]) => {
                score(i, h.threshold, ftl.now - segs.seal_time[s], true)
            }
            _ => i,
        };
        if best.is_none_or(|(b, _)| x > b) {
            best = Some((x, s as SegmentId));
            bar = x;
        }
    }
    best.map(|(_, s)| s)
}

/// Adjusted Greedy, with the last hint its policy gave.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct AdjustedGreedy {
    hint: Option<VictimHint>,
}

impl VictimSelector for AdjustedGreedy {
    crate::checkpoint_by_serde!();
    fn name(&self) -> &'static str {
        "adjusted-greedy"
    }

    fn on_seal(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn select(&mut self, ftl: &Ftl, max_valid: u32) -> Option<SegmentId> {
        select(ftl, max_valid, self.hint.as_ref())
    }

    fn remove(&mut self, _seg: SegmentId, _ftl: &Ftl) {}

    fn memory_bytes(&self) -> usize {
        0
    }

    fn wants_hint(&self) -> bool {
        true
    }

    fn set_hint(&mut self, hint: Option<VictimHint>) {
        self.hint = hint;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceConfig;

    #[test]
    fn eq1_by_hand() {
        // I = 0.5, V = 0.5, T = 100, C = 50: 0.5 / (1 + 0.5·2) = 0.25.
        assert!((score(0.5, 100, 50, true) - 0.25).abs() < 1e-12);
        // Older (C = 400): 0.5 / (1 + 0.125) = 0.444...
        assert!((score(0.5, 100, 400, true) - 0.5 / 1.125).abs() < 1e-12);
        // Not short-lived: greedy.
        assert_eq!(score(0.5, 100, 50, false), 0.5);
        // C = 0 counts as 1; a fully invalid segment has no discount.
        assert!((score(0.5, 10, 0, true) - 0.5 / 6.0).abs() < 1e-12);
        assert_eq!(score(1.0, 1_000, 1, true), 1.0);
    }

    /// Three hand-made segments of 10 blocks, sealed at times 0, 0, 90,
    /// chosen at time 100: A (group 0 = short, 4 valid), B (group 1, 5
    /// valid), C (group 0, 3 valid, young).
    fn ftl() -> Ftl {
        let geo = DeviceConfig {
            logical_blocks: 40,
            physical_blocks: Some(60),
            segment_blocks: 10,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        let mut f = Ftl::new(geo, 2);
        for (s, (group, valid, sealed)) in
            [(0, 4, 0), (1, 5, 0), (0, 3, 90)].into_iter().enumerate()
        {
            f.segs.state[s] = SegState::Sealed;
            f.segs.group[s] = group;
            f.segs.valid[s] = valid;
            f.segs.seal_time[s] = sealed;
        }
        f.now = 100;
        f
    }

    #[test]
    fn picks_by_eq1_on_hand_made_segments() {
        let f = ftl();
        // Greedy without a hint: C (0.7 invalid).
        assert_eq!(select(&f, 10, None), Some(2));
        // T = 40: A = 0.6/(1 + 0.4·40/100) = 0.517 > B = 0.5 >
        // C = 0.7/(1 + 0.3·40/10) = 0.318.
        let h = VictimHint {
            threshold: 40,
            short_groups: 1,
        };
        assert_eq!(select(&f, 10, Some(&h)), Some(0));
        // T = 200: A = 0.6/1.8 = 0.33 < B = 0.5.
        let h = VictimHint {
            threshold: 200,
            short_groups: 1,
        };
        assert_eq!(select(&f, 10, Some(&h)), Some(1));
        // Eligibility: at most 4 valid leaves A and C; C is discounted to
        // 0.7/(1 + 0.3·20) = 0.1 < A's 0.6/(1 + 0.4·2) = 0.33.
        assert_eq!(select(&f, 4, Some(&h)), Some(0));
        // The selector uses the hint it was given.
        let mut s = AdjustedGreedy::default();
        assert!(s.wants_hint());
        assert_eq!(s.select(&f, 10), Some(2));
        s.set_hint(Some(h));
        assert_eq!(s.select(&f, 10), Some(1));
    }

    #[test]
    fn passing_over_hopeless_segments_changes_no_choice() {
        // Against scoring every segment (ties to the lowest id), over random
        // segment tables, thresholds and eligibility bounds.
        let geo = DeviceConfig {
            logical_blocks: 2000,
            physical_blocks: Some(3200),
            segment_blocks: 32,
            ..Default::default()
        }
        .geometry()
        .unwrap();
        let mut rng = crate::rng::Rng::new(4);
        for round in 0..300 {
            let mut f = Ftl::new(geo, 4);
            f.now = 10_000;
            for s in 0..geo.segments as usize {
                f.segs.state[s] = if rng.below(8) == 0 {
                    SegState::Free
                } else {
                    SegState::Sealed
                };
                f.segs.group[s] = rng.below(4) as u16;
                f.segs.valid[s] = 1 + rng.below(32) as u32;
                f.segs.seal_time[s] = rng.below(10_000);
            }
            let h = VictimHint {
                threshold: rng.below(5_000),
                short_groups: rng.below(16),
            };
            let max_valid = 1 + rng.below(32) as u32;
            for hint in [None, Some(&h)] {
                let mut want: Option<(f64, SegmentId)> = None;
                for s in 0..geo.segments as usize {
                    let v = f.segs.valid[s];
                    if f.segs.state[s] != SegState::Sealed || v > max_valid {
                        continue;
                    }
                    let i = 1.0 - v as f64 / 32.0;
                    let short = hint.is_some_and(|h| h.is_short(f.segs.group[s]));
                    let x = score(i, h.threshold, f.now - f.segs.seal_time[s], short);
                    if want.is_none_or(|(b, _)| x > b) {
                        want = Some((x, s as SegmentId));
                    }
                }
                assert_eq!(
                    select(&f, max_valid, hint),
                    want.map(|w| w.1),
                    "round {round}"
                );
            }
        }
    }
}
