//! `schedule=P:PATTERN`: a workload (a `mix:` tenant) that is on only in
//! some phases. Time is cut into phases of P seconds; PATTERN is a string of
//! `1` (on) and `0` (off), one per phase, repeated: `schedule=600:110000` is
//! on for the first 20 of every 60 minutes. While off the tenant issues
//! nothing; while on it runs at its own rate (its generator's clock only
//! advances in on phases). OFIOS's container workload (FIOS Table 4: six
//! 10-minute phases) is a mix of tenants with different patterns.

use super::Workload;
use crate::request::Request;

/// Parse `P:PATTERN` into (phase length [ns], on/off pattern).
pub(crate) fn parse(v: &str) -> Result<(u64, Vec<bool>), String> {
    let bad = || {
        format!(
            "schedule '{v}' must be SECONDS:PATTERN with a pattern of 0/1 holding at least one 1, \
             e.g. 600:110000"
        )
    };
    let (p, pat) = v.split_once(':').ok_or_else(bad)?;
    let secs: f64 = p.parse().map_err(|_| bad())?;
    if !(secs.is_finite() && secs > 0.0) {
        return Err(bad());
    }
    let pattern: Vec<bool> = pat
        .chars()
        .map(|c| match c {
            '1' => Ok(true),
            '0' => Ok(false),
            _ => Err(bad()),
        })
        .collect::<Result<_, _>>()?;
    if !pattern.contains(&true) {
        return Err(bad());
    }
    Ok((((secs * 1e9).round() as u64).max(1), pattern))
}

/// A workload switched on and off by phase.
pub(crate) struct Scheduled {
    inner: Box<dyn Workload>,
    phase_ns: u64,
    /// Index of each on phase inside the cycle.
    on: Vec<u64>,
    cycle: u64,
}

impl Scheduled {
    pub(crate) fn new(inner: Box<dyn Workload>, phase_ns: u64, pattern: &[bool]) -> Self {
        Scheduled {
            inner,
            phase_ns,
            on: (0..pattern.len() as u64)
                .filter(|&i| pattern[i as usize])
                .collect(),
            cycle: pattern.len() as u64,
        }
    }

    /// Wall time of on-time `tau` (time counted in on phases only).
    fn wall(&self, tau: u64) -> u64 {
        let per_cycle = self.on.len() as u64 * self.phase_ns;
        let (n, r) = (tau / per_cycle, tau % per_cycle);
        let (k, off) = (r / self.phase_ns, r % self.phase_ns);
        (n * self.cycle + self.on[k as usize]) * self.phase_ns + off
    }
}

impl Workload for Scheduled {
    fn next_request(&mut self) -> Request {
        let mut r = self.inner.next_request();
        r.time_ns = self.wall(r.time_ns);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Clock(u64);
    impl Workload for Clock {
        fn next_request(&mut self) -> Request {
            self.0 += 1;
            Request {
                time_ns: self.0,
                lba: 0,
                blocks: 1,
                op: crate::request::Op::Write,
                tenant: 0,
            }
        }
    }

    #[test]
    fn on_time_maps_to_on_phases() {
        let (p, pat) = parse("0.00000001:0110").unwrap();
        assert_eq!(p, 10);
        let mut s = Scheduled::new(Box::new(Clock(0)), p, &pat);
        let times: Vec<u64> = (0..45).map(|_| s.next_request().time_ns).collect();
        // On-time 1..=19 -> phases 1, 2 (wall 11..29); 20 -> wall 50 (next cycle, phase 1).
        assert_eq!(times[0], 11);
        assert_eq!(times[8], 19);
        assert_eq!(times[9], 20);
        assert_eq!(times[18], 29);
        assert_eq!(times[19], 50);
        assert!(times.windows(2).all(|w| w[0] < w[1]));
        assert!(parse("600:000").is_err());
        assert!(parse("600").is_err());
        assert!(parse("-1:1").is_err());
        assert!(parse("600:1x").is_err());
    }
}
