//! `sets[:N[:M[:THETA]]]`: recurring sets of chunks rewritten together, the
//! access pattern FIOS's coherency feature captures (§3.4, Fig. 6: chunks
//! "mostly updated together in multiple time windows"). The region is cut
//! into chunks of the request size (`size`, default 1 block); N sets
//! (default 64) of M chunks each (default 16) are drawn once, disjoint and
//! scattered over the region. Each burst picks a set by Zipf(THETA) over
//! the sets (default 1.0; 0 = uniform) and rewrites all of its chunks, one
//! request per chunk, in the set's order.

use super::zipf::ZipfSampler;
use super::AddressPattern;
use crate::rng::Rng;

/// Recurring sets.
pub(crate) struct Sets {
    /// Chunk start offsets of each set, `m` per set.
    members: Vec<u64>,
    m: usize,
    pick: ZipfSampler,
    /// Set of the burst under way and the next member.
    current: usize,
    pos: usize,
}

impl Sets {
    pub(crate) fn new(len: u64, size: u64, n: u64, m: u64, theta: f64, rng: &mut Rng) -> Self {
        let chunks = (len / size.max(1)).max(1);
        let m = m.clamp(1, chunks);
        let n = n.clamp(1, (chunks / m).max(1));
        // A partial Fisher-Yates shuffle of the chunks: the first n·m.
        let take = (n * m) as usize;
        let mut ids: Vec<u64> = (0..chunks).collect();
        for i in 0..take {
            let j = i + rng.below(chunks - i as u64) as usize;
            ids.swap(i, j);
        }
        Sets {
            members: ids[..take].iter().map(|&c| c * size).collect(),
            m: m as usize,
            pick: ZipfSampler::new(n, theta),
            current: 0,
            pos: usize::MAX,
        }
    }
}

impl AddressPattern for Sets {
    #[inline]
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, _written: u64) -> u64 {
        if self.pos >= self.m {
            self.current = (self.pick.sample(rng) - 1) as usize;
            self.pos = 0;
        }
        let a = self.members[self.current * self.m + self.pos];
        self.pos += 1;
        a.min(len - size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_rewrite_whole_sets() {
        let mut rng = Rng::new(1);
        let mut s = Sets::new(1000, 10, 4, 5, 0.0, &mut rng);
        let sets: Vec<Vec<u64>> = s.members.chunks(5).map(|c| c.to_vec()).collect();
        let all: std::collections::BTreeSet<u64> = s.members.iter().copied().collect();
        assert_eq!(all.len(), 20, "disjoint");
        assert!(all.iter().all(|a| a % 10 == 0 && *a < 1000));
        for _ in 0..10 {
            let burst: Vec<u64> = (0..5).map(|_| s.start(&mut rng, 1000, 10, 0)).collect();
            assert!(sets.contains(&burst), "{burst:?}");
        }
    }
}
