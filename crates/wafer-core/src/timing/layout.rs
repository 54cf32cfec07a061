//! Physical layout: where each FTL page lives on the flash array.
//!
//! A segment is a superblock: one block on every plane of the device
//! (docs/ARCHITECTURE.md; FEMU's and SimpleSSD's superblock, MQSim's
//! plane-allocation orders). Page `j` of a segment goes to stripe slot
//! `j mod planes`, row `j / planes`, and the slot is decoded into (channel,
//! way, die, plane) in the preset's allocation order, fastest dimension
//! first: with CWDP consecutive pages go to consecutive channels, then
//! chips, then dies, then planes (MQSim's `ch = lpa % C; chip = (lpa / C) %
//! W; ...`). Page `j`'s die and plane are fixed; segment `s` is block `s` of
//! every plane.
//!
//! A device smaller than the preset's superblocks allow (a trace's small
//! footprint) gets segments of fewer rows (`slice` pages per plane instead
//! of `pages_per_block`); see [`Layout::new`].

use super::config::{parse_allocation, Dim, SsdConfig};
use crate::divisor::Divisor;
use crate::error::Result;

/// Where one page is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    /// Global die index: (channel x ways + way) x dies + die.
    pub die: u32,
    /// Global plane index: die x planes + plane.
    pub plane: u32,
    /// Page inside its block (its row in the block; fixes the page type).
    pub page: u32,
    /// Block inside its plane (the segment's index for data pages).
    pub block: u32,
}

/// The mapping of FTL pages and translation pages to the flash array.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Channels.
    pub channels: u32,
    /// Chips per channel.
    pub ways: u32,
    /// Dies per chip.
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Planes in all (the stripe width).
    pub planes: u32,
    /// Dies in all.
    pub dies: u32,
    /// Pages of a segment on each plane (rows) [pages].
    pub slice: u32,
    /// Pages per flash block of the preset [pages].
    pub pages_per_block: u32,
    /// Segment size = planes x slice [pages].
    pub segment_pages: u32,
    /// Segments of the FTL (data blocks per plane).
    pub segments: u32,
    /// Global plane of each stripe slot.
    slot_plane: Vec<u32>,
    /// `segment_pages`, `planes` and `planes_per_die` as multiplies.
    per_segment: Divisor,
    per_row: Divisor,
    per_die: Divisor,
}

impl Layout {
    /// The layout of `ssd` for an FTL of `segments` segments of
    /// `segment_pages` pages, which must be a multiple of the plane count.
    pub fn new(ssd: &SsdConfig, segment_pages: u32, segments: u32) -> Result<Layout> {
        let f = &ssd.flash;
        let order = parse_allocation(&f.allocation)?;
        let planes = ssd.planes();
        debug_assert_eq!(segment_pages % planes, 0);
        let size = |d: Dim| match d {
            Dim::Channel => f.channels,
            Dim::Way => f.chips_per_channel,
            Dim::Die => f.dies_per_chip,
            Dim::Plane => f.planes_per_die,
        };
        let slot_plane = (0..planes)
            .map(|slot| {
                let mut q = slot;
                let (mut c, mut w, mut d, mut p) = (0, 0, 0, 0);
                for dim in order {
                    let n = size(dim);
                    let i = q % n;
                    q /= n;
                    match dim {
                        Dim::Channel => c = i,
                        Dim::Way => w = i,
                        Dim::Die => d = i,
                        Dim::Plane => p = i,
                    }
                }
                ((c * f.chips_per_channel + w) * f.dies_per_chip + d) * f.planes_per_die + p
            })
            .collect();
        Ok(Layout {
            channels: f.channels,
            ways: f.chips_per_channel,
            dies_per_chip: f.dies_per_chip,
            planes_per_die: f.planes_per_die,
            planes,
            dies: ssd.dies(),
            slice: segment_pages / planes,
            pages_per_block: f.pages_per_block,
            segment_pages,
            segments,
            slot_plane,
            per_segment: Divisor::new(segment_pages),
            per_row: Divisor::new(planes),
            per_die: Divisor::new(f.planes_per_die),
        })
    }

    /// Where FTL physical page `pba` is.
    #[inline]
    pub fn locate(&self, pba: u32) -> Loc {
        let seg = self.per_segment.quotient(pba);
        let j = pba - seg * self.segment_pages;
        let row = self.per_row.quotient(j);
        let plane = self.slot_plane[(j - row * self.planes) as usize];
        Loc {
            die: self.per_die.quotient(plane),
            plane,
            page: row,
            block: seg,
        }
    }

    /// Where slot `t` of the translation area is: striped like data pages,
    /// in blocks after the data blocks of each plane.
    #[inline]
    pub fn locate_translation(&self, t: u32) -> Loc {
        let row = t / self.planes;
        let plane = self.slot_plane[(t - row * self.planes) as usize];
        Loc {
            die: plane / self.planes_per_die,
            plane,
            page: row % self.pages_per_block,
            block: self.segments + row / self.pages_per_block,
        }
    }

    /// Channel of global die `die`.
    #[inline]
    pub fn channel_of(&self, die: u32) -> u32 {
        die / (self.ways * self.dies_per_chip)
    }

    /// Global chip index of global die `die`.
    #[inline]
    pub fn chip_of(&self, die: u32) -> u32 {
        die / self.dies_per_chip
    }

    /// Chips in all.
    pub fn chips(&self) -> u32 {
        self.channels * self.ways
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssd(alloc: &str) -> SsdConfig {
        let mut s = SsdConfig::default();
        s.flash.channels = 2;
        s.flash.chips_per_channel = 3;
        s.flash.dies_per_chip = 2;
        s.flash.planes_per_die = 2;
        s.flash.allocation = alloc.into();
        s
    }

    #[test]
    fn cwdp_stripes_channels_first() {
        let s = ssd("CWDP");
        let l = Layout::new(&s, 24 * 4, 10).unwrap();
        // page 0: ch0, page 1: ch1, page 2: ch0 way 1
        let p = |pba| {
            let loc = l.locate(pba);
            (
                l.channel_of(loc.die),
                l.chip_of(loc.die) % 3,
                loc.die % 2,
                loc.plane % 2,
            )
        };
        assert_eq!(p(0), (0, 0, 0, 0));
        assert_eq!(p(1), (1, 0, 0, 0));
        assert_eq!(p(2), (0, 1, 0, 0));
        assert_eq!(p(6), (0, 0, 1, 0));
        assert_eq!(p(12), (0, 0, 0, 1));
        // row 1 of the segment starts after all 24 planes
        assert_eq!(l.locate(24).page, 1);
        assert_eq!(l.locate(96).block, 1);
    }

    #[test]
    fn every_scheme_is_a_bijection_over_planes() {
        for a in ["CWDP", "PDWC", "WCPD", "DPCW"] {
            let s = ssd(a);
            let l = Layout::new(&s, 24, 4).unwrap();
            let mut seen = [false; 24];
            for j in 0..24 {
                let loc = l.locate(j);
                assert!(!seen[loc.plane as usize], "{a}: plane twice");
                seen[loc.plane as usize] = true;
                assert_eq!(loc.die, loc.plane / 2);
            }
        }
    }

    #[test]
    fn pdwc_fills_planes_of_a_die_first() {
        let l = Layout::new(&ssd("PDWC"), 24, 4).unwrap();
        assert_eq!(l.locate(0).die, l.locate(1).die);
        assert_ne!(l.locate(0).plane, l.locate(1).plane);
        assert_eq!(l.channel_of(l.locate(23).die), 1);
    }
}
