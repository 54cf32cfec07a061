//! `mix:A+B+...`: a multi-tenant mix. Each tenant is a full workload spec with
//! its own pattern, request sizes, arrival rate (`iops`) and region
//! (`region=F`, a fraction of the device; tenants without one share what the
//! others leave equally). Regions are laid out one after the other. Requests
//! are interleaved by arrival time, so the rates set the mix.

use super::{parse_single, Workload};
use crate::error::{Error, Result};
use crate::request::Request;
use crate::rng::Rng;

/// Interleaves tenants by timestamp.
struct Mix {
    tenants: Vec<Box<dyn Workload>>,
    pending: Vec<Request>,
}

impl Workload for Mix {
    #[inline]
    fn next_request(&mut self) -> Request {
        let mut best = 0;
        for i in 1..self.pending.len() {
            if self.pending[i].time_ns < self.pending[best].time_ns {
                best = i;
            }
        }
        let mut next = self.tenants[best].next_request();
        next.tenant = best as u32;
        std::mem::replace(&mut self.pending[best], next)
    }
}

fn region_of(part: &str) -> Option<f64> {
    part.split(',')
        .skip(1)
        .find_map(|kv| kv.trim().strip_prefix("region="))
        .and_then(|v| v.parse().ok())
}

pub(super) fn parse(
    spec: &str,
    rest: &str,
    logical: u64,
    block_size: u32,
    seed: u64,
) -> Result<Box<dyn Workload>> {
    let parts: Vec<&str> = rest
        .split('+')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return Err(Error::workload(
            spec,
            "a mix needs at least one tenant: mix:SPEC+SPEC+...",
        ));
    }
    let given: f64 = parts.iter().filter_map(|p| region_of(p)).sum();
    let unsized_count = parts.iter().filter(|p| region_of(p).is_none()).count();
    if given > 1.0 + 1e-9 || (unsized_count > 0 && given >= 1.0) {
        return Err(Error::workload(
            spec,
            format!("tenant regions add up to {given}, leaving no room; they must sum to <= 1"),
        ));
    }
    let share = if unsized_count > 0 {
        (1.0 - given) / unsized_count as f64
    } else {
        0.0
    };
    let mut offset = 0u64;
    let mut tenants = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        let frac = region_of(part).unwrap_or(share);
        let len = ((frac * logical as f64) as u64).clamp(1, logical - offset.min(logical - 1));
        let (w, _) = parse_single(
            spec,
            part,
            (offset, len),
            block_size,
            Rng::derive(seed, i as u64 + 1),
        )?;
        tenants.push(w);
        offset = (offset + len).min(logical - 1);
    }
    let pending = tenants
        .iter_mut()
        .enumerate()
        .map(|(i, t)| Request {
            tenant: i as u32,
            ..t.next_request()
        })
        .collect();
    Ok(Box::new(Mix { tenants, pending }))
}
