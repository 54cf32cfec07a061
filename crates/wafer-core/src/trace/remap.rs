//! Dense remapping of the touched address space: the blocks a trace touches,
//! in address order, become blocks 0, 1, 2, ... so that a sparse volume
//! replays on a device no larger than its footprint. Built from the touched
//! block ranges merged into disjoint intervals; a lookup is a binary search.

/// Collects touched ranges; merges them as it goes to bound memory.
#[derive(Default)]
pub struct Builder {
    ranges: Vec<(u64, u64)>,
    merged_len: usize,
}

fn merge(v: &mut Vec<(u64, u64)>) {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for &(s, e) in v.iter() {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    *v = out;
}

impl Builder {
    /// Blocks [start, end) were touched.
    pub fn add(&mut self, start: u64, end: u64) {
        self.ranges.push((start, end));
        if self.ranges.len() > 2 * self.merged_len + (1 << 20) {
            merge(&mut self.ranges);
            self.merged_len = self.ranges.len();
        }
    }

    /// The finished mapping.
    pub fn finish(mut self) -> Remap {
        merge(&mut self.ranges);
        let mut base = Vec::with_capacity(self.ranges.len());
        let mut total = 0u64;
        for &(s, e) in &self.ranges {
            base.push(total);
            total += e - s;
        }
        Remap {
            ranges: self.ranges,
            base,
            total,
        }
    }
}

/// Touched intervals and the dense index of each interval's first block.
#[derive(Clone, Debug)]
pub struct Remap {
    ranges: Vec<(u64, u64)>,
    base: Vec<u64>,
    total: u64,
}

impl Remap {
    /// Dense block of original block `b` (which must have been touched).
    #[inline]
    pub fn map(&self, b: u64) -> u64 {
        let i = self.ranges.partition_point(|&(s, _)| s <= b) - 1;
        self.base[i] + (b - self.ranges[i].0)
    }

    /// Number of distinct touched blocks (the dense range's size).
    pub fn blocks(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_blocks_become_dense_in_address_order() {
        let mut b = Builder::default();
        for (s, e) in [(100, 104), (10, 12), (102, 110), (1000, 1001), (11, 13)] {
            b.add(s, e);
        }
        let m = b.finish();
        assert_eq!(m.blocks(), 3 + 10 + 1);
        assert_eq!(
            [m.map(10), m.map(12), m.map(100), m.map(109), m.map(1000)],
            [0, 2, 3, 12, 13]
        );
    }
}
