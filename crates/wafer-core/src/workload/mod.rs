//! Seeded synthetic workloads and their compact spec strings.
//!
//! Grammar: `NAME[:ARG...][,KEY=VALUE...]`, or `mix:SPEC+SPEC+...` for a
//! multi-tenant mix whose tenants each get their own region, sizes and rate.
//!
//! | spec | addresses |
//! |---|---|
//! | `uniform` | uniform over the region |
//! | `zipf[:THETA]` | Zipf(θ) over the region (θ = 1.0 by default), hot blocks scattered |
//! | `hotcold[:W[:S]]` | a fraction W of requests to the first fraction S of the region (0.9, 0.1) |
//! | `seq` | sequential, wrapping at the region's end |
//! | `phase[:W[:S[:P]]]` | like hotcold, but the hot spot moves to a random place every P drive-writes (0.9, 0.1, 1.0); `move=slide` shifts it by its length instead |
//! | `sets[:N[:M[:THETA]]]` | bursts that rewrite one of N recurring sets of M chunks (chunk = request size), sets picked by Zipf(THETA) (64, 16, 1.0) |
//! | `mix:A+B+...` | tenants A, B, ... interleaved by their arrival times |
//!
//! Keys (all optional): `size=N` or `size=A-B` request size in blocks, or in
//! bytes with a suffix (`size=64k`, `size=4k-1m`; default 1 block);
//! `iops=R` mean arrival rate (default 10000); `arrivals=poisson` (default),
//! `mmpp[:R[:T[:CV]]]` or `onoff[:ON[:OFF[:CV]]]` (bursty arrivals, see
//! [`arrivals`]); `reads=F` fraction of requests that are reads (default 0);
//! `region=F` fraction of the device the workload (tenant) covers (default:
//! all, or an equal share of what other tenants leave); `scramble=0|1`
//! (zipf only: spread hot ranks over the region, default 1);
//! `move=jump|slide` (phase only); `schedule=P:PATTERN` (on/off phases of
//! P seconds, e.g. `600:110000`, see [`schedule`]).

pub mod arrivals;
mod hotcold;
mod mix;
mod phase;
pub mod schedule;
mod sequential;
mod sets;
mod uniform;
mod zipf;

use crate::error::{Error, Result};
use crate::request::{Op, Request};
use crate::rng::Rng;

/// The workload grammar as `--help` shows it (`_core.workload_grammar`),
/// kept beside [`parse`], which reads it; a test parses its examples.
pub const GRAMMAR: &str = r#"workload specs (--workload):
  uniform                 uniform random writes
  zipf[:THETA]            Zipf(theta), default 1.0; hot blocks scattered (scramble=0 to keep them together)
  hotcold[:W[:S]]         fraction W of requests to fraction S of the space (default 0.9:0.1)
  seq                     sequential overwrites, wrapping at the end
  phase[:W[:S[:P]]]       hot spot W/S that moves every P drive-writes (default 0.9:0.1:1.0); move=slide
  sets[:N[:M[:THETA]]]    bursts rewriting one of N recurring sets of M chunks (chunk = size), sets by
                          Zipf(THETA) (default 64:16:1.0): FIOS's coherency
  mix:A+B+...             tenants with their own region, sizes and rate, e.g.
                          mix:zipf:1.0,size=8,region=0.5+seq,size=64k,iops=500
  keys: size=N|A-B|64k  iops=R  reads=F  region=F  scramble=0|1
        arrivals=poisson|mmpp[:R[:T[:CV]]]|onoff[:ON[:OFF[:CV]]]
                          bursty arrivals at the same mean rate: mmpp = two rates R apart (10) switching
                          every T s (1) with gap CV (0.2), write inter-arrival ACF ~0.9; onoff = on ON s,
                          silent OFF s; addresses as with poisson
        move=jump|slide   phase only: the hot spot jumps to a random place (default) or slides by its length
        schedule=P:PATTERN  on/off phases of P seconds, PATTERN of 0/1 repeated, e.g. 600:110000
                          (OFIOS's six 10-minute phases: one pattern per tenant)
"#;

pub use zipf::ZipfSampler;

/// An endless, seeded source of requests.
pub trait Workload: Send {
    /// The next request (timestamps never decrease).
    fn next_request(&mut self) -> Request;

    /// The next request, written into `out` (the replay's lookahead slot:
    /// the request is built in place instead of copied there right after
    /// the call, a copy that stalls on store forwarding).
    #[inline]
    fn next_into(&mut self, out: &mut Request) {
        *out = self.next_request();
    }
}

/// How a generator places a request of `size` blocks inside a region of `len` blocks.
pub(crate) trait AddressPattern: Send {
    /// Start offset in the region; `written` counts blocks this generator wrote so far.
    fn start(&mut self, rng: &mut Rng, len: u64, size: u64, written: u64) -> u64;
}

/// Request generator shared by all single-pattern workloads.
pub(crate) struct Generator<P> {
    pattern: P,
    rng: Rng,
    /// First block of the region and its length [blocks].
    offset: u64,
    len: u64,
    /// Request size range [blocks], inclusive.
    size: (u64, u64),
    /// Mean inter-arrival time [ns].
    gap_ns: f64,
    reads: f64,
    clock_ns: f64,
    written: u64,
    /// A bursty arrival process replacing the Poisson one.
    arrivals: Option<arrivals::Arrivals>,
}

impl<P: AddressPattern> Workload for Generator<P> {
    fn next_request(&mut self) -> Request {
        let mut r = Request::default();
        self.next_into(&mut r);
        r
    }

    #[inline]
    fn next_into(&mut self, out: &mut Request) {
        let poisson = self.rng.exponential(self.gap_ns);
        match &mut self.arrivals {
            None => self.clock_ns += poisson,
            Some(a) => self.clock_ns = a.next(self.clock_ns),
        }
        let size = if self.size.0 == self.size.1 {
            self.size.0
        } else {
            self.size.0 + self.rng.below(self.size.1 - self.size.0 + 1)
        };
        let op = if self.reads > 0.0 && self.rng.next_f64() < self.reads {
            Op::Read
        } else {
            Op::Write
        };
        let start = self
            .pattern
            .start(&mut self.rng, self.len, size, self.written);
        let size = size.min(self.len - start);
        if op == Op::Write {
            self.written += size;
        }
        *out = Request {
            time_ns: self.clock_ns as u64,
            lba: self.offset + start,
            blocks: size as u32,
            op,
            tenant: 0,
        };
    }
}

/// Options common to every pattern, parsed from `KEY=VALUE` pairs.
struct Common {
    size: (u64, u64),
    iops: f64,
    reads: f64,
    region: Option<f64>,
    scramble: bool,
    arrivals: arrivals::ArrivalSpec,
    slide: Option<bool>,
    schedule: Option<(u64, Vec<bool>)>,
}

const KEYS: &str = "size, iops, arrivals, reads, region, scramble, move, schedule";
const NAMES: &str = "uniform, zipf[:THETA], hotcold[:W[:S]], seq, phase[:W[:S[:P]]], \
                     sets[:N[:M[:THETA]]], mix:SPEC+SPEC+...";

fn parse_bytes_or_blocks(s: &str, block_size: u32) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (num, mult) = [
        ("kib", 1u64 << 10),
        ("mib", 1 << 20),
        ("gib", 1 << 30),
        ("k", 1 << 10),
        ("m", 1 << 20),
        ("g", 1 << 30),
    ]
    .iter()
    .find_map(|(suf, m)| lower.strip_suffix(suf).map(|n| (n.to_string(), Some(*m))))
    .unwrap_or((lower.clone(), None));
    let n: u64 = num.trim().parse().ok()?;
    match mult {
        None => Some(n),
        Some(m) => Some((n.checked_mul(m)?).div_ceil(block_size as u64)),
    }
}

fn parse_fraction(spec: &str, what: &str, s: &str, allow_zero: bool) -> Result<f64> {
    let v: f64 = s
        .parse()
        .map_err(|_| Error::workload(spec, format!("{what} '{s}' is not a number")))?;
    if !(v.is_finite() && v <= 1.0 && (v > 0.0 || (allow_zero && v == 0.0))) {
        let range = if allow_zero { "[0, 1]" } else { "(0, 1]" };
        return Err(Error::workload(
            spec,
            format!("{what} {v} must be in {range}"),
        ));
    }
    Ok(v)
}

fn parse_common(spec: &str, keys: &[&str], block_size: u32) -> Result<Common> {
    let mut c = Common {
        size: (1, 1),
        iops: 10_000.0,
        reads: 0.0,
        region: None,
        scramble: true,
        arrivals: arrivals::ArrivalSpec::Poisson,
        slide: None,
        schedule: None,
    };
    for kv in keys {
        let (k, v) = kv.split_once('=').ok_or_else(|| {
            Error::workload(spec, format!("'{kv}' is not KEY=VALUE; keys: {KEYS}"))
        })?;
        match k.trim() {
            "size" => {
                let (a, b) = v.split_once('-').unwrap_or((v, v));
                let parse = |x: &str| {
                    parse_bytes_or_blocks(x, block_size)
                        .filter(|&n| n >= 1 && n <= u32::MAX as u64)
                        .ok_or_else(|| {
                            Error::workload(
                                spec,
                                format!(
                                    "size '{v}' must be N or A-B blocks >= 1, or bytes like 64k"
                                ),
                            )
                        })
                };
                c.size = (parse(a)?, parse(b)?);
                if c.size.0 > c.size.1 {
                    return Err(Error::workload(spec, format!("size range '{v}' is empty")));
                }
            }
            "iops" => {
                c.iops = v
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| {
                        Error::workload(spec, format!("iops '{v}' must be a rate > 0 [requests/s]"))
                    })?;
            }
            "reads" => c.reads = parse_fraction(spec, "reads", v, true)?,
            "region" => c.region = Some(parse_fraction(spec, "region", v, false)?),
            "arrivals" => {
                c.arrivals =
                    arrivals::ArrivalSpec::parse(v.trim()).map_err(|e| Error::workload(spec, e))?
            }
            "move" => {
                c.slide = Some(match v.trim() {
                    "slide" => true,
                    "jump" => false,
                    _ => {
                        return Err(Error::workload(
                            spec,
                            format!("move '{v}' must be jump or slide"),
                        ))
                    }
                })
            }
            "schedule" => {
                c.schedule = Some(schedule::parse(v.trim()).map_err(|e| Error::workload(spec, e))?)
            }
            "scramble" => {
                c.scramble = match v {
                    "1" | "true" => true,
                    "0" | "false" => false,
                    _ => {
                        return Err(Error::workload(
                            spec,
                            format!("scramble '{v}' must be 0 or 1"),
                        ))
                    }
                }
            }
            other => {
                return Err(Error::workload(
                    spec,
                    format!("unknown key '{other}'; keys: {KEYS}"),
                ))
            }
        }
    }
    Ok(c)
}

fn args<const N: usize>(
    spec: &str,
    name: &str,
    given: &[&str],
    defaults: [f64; N],
) -> Result<[f64; N]> {
    if given.len() > N {
        return Err(Error::workload(
            spec,
            format!(
                "'{name}' takes at most {N} argument(s), got {}",
                given.len()
            ),
        ));
    }
    let mut out = defaults;
    for (i, a) in given.iter().enumerate() {
        out[i] = a
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| {
                Error::workload(spec, format!("argument '{a}' of '{name}' is not a number"))
            })?;
    }
    Ok(out)
}

/// Parse one non-mix spec over the region [offset, offset + len).
fn parse_single(
    spec: &str,
    part: &str,
    region: (u64, u64),
    block_size: u32,
    rng: Rng,
) -> Result<(Box<dyn Workload>, Common)> {
    let mut pieces = part.split(',');
    let head = pieces.next().unwrap_or("").trim();
    let keys: Vec<&str> = pieces.map(str::trim).filter(|s| !s.is_empty()).collect();
    let c = parse_common(spec, &keys, block_size)?;
    let mut words = head.split(':');
    let name = words.next().unwrap_or("");
    let argv: Vec<&str> = words.collect();
    let (offset, len) = region;
    if c.size.1 > len {
        return Err(Error::workload(
            spec,
            format!(
                "request size {} blocks exceeds the region of {len} blocks",
                c.size.1
            ),
        ));
    }
    if c.slide.is_some() && name != "phase" {
        return Err(Error::workload(
            spec,
            format!("key 'move' is for phase only, not '{name}'"),
        ));
    }
    fn make<P: AddressPattern + 'static>(
        p: P,
        rng: Rng,
        c: &Common,
        region: (u64, u64),
    ) -> Box<dyn Workload> {
        // The arrival process draws from its own stream (derived from the
        // generator's state, which is itself derived from the seed).
        let arrivals =
            arrivals::Arrivals::new(&c.arrivals, c.iops, Rng::derive(rng.clone().next_u64(), 77));
        let w: Box<dyn Workload> = Box::new(Generator {
            pattern: p,
            rng,
            offset: region.0,
            len: region.1,
            size: c.size,
            gap_ns: 1e9 / c.iops,
            reads: c.reads,
            clock_ns: 0.0,
            written: 0,
            arrivals,
        });
        match &c.schedule {
            None => w,
            Some((phase, pattern)) => Box::new(schedule::Scheduled::new(w, *phase, pattern)),
        }
    }
    let mut rng = rng;
    let w: Box<dyn Workload> = match name {
        "uniform" => {
            args::<0>(spec, name, &argv, [])?;
            make(uniform::Uniform, rng, &c, (offset, len))
        }
        "zipf" => {
            let [theta] = args(spec, name, &argv, [1.0])?;
            if theta < 0.0 {
                return Err(Error::workload(
                    spec,
                    format!("zipf theta {theta} must be >= 0"),
                ));
            }
            let p = zipf::Zipf::new(len, theta, c.scramble, &mut rng);
            make(p, rng, &c, (offset, len))
        }
        "hotcold" => {
            let [w, s] = args(spec, name, &argv, [0.9, 0.1])?;
            let (w, s) = (check_frac(spec, "W", w)?, check_frac(spec, "S", s)?);
            make(hotcold::HotCold::new(len, w, s), rng, &c, (offset, len))
        }
        "seq" | "sequential" => {
            args::<0>(spec, name, &argv, [])?;
            make(sequential::Sequential::default(), rng, &c, (offset, len))
        }
        "phase" => {
            let [w, s, p] = args(spec, name, &argv, [0.9, 0.1, 1.0])?;
            let (w, s) = (check_frac(spec, "W", w)?, check_frac(spec, "S", s)?);
            if p <= 0.0 {
                return Err(Error::workload(
                    spec,
                    format!("phase period {p} must be > 0 drive-writes"),
                ));
            }
            let slide = c.slide.unwrap_or(false);
            make(
                phase::Phase::new(len, w, s, p, slide),
                rng,
                &c,
                (offset, len),
            )
        }
        "sets" => {
            let [n, m, theta] = args(spec, name, &argv, [64.0, 16.0, 1.0])?;
            if n < 1.0 || m < 1.0 || theta < 0.0 {
                return Err(Error::workload(
                    spec,
                    format!("sets N = {n} and M = {m} must be >= 1, THETA = {theta} >= 0"),
                ));
            }
            if c.size.0 != c.size.1 {
                return Err(Error::workload(
                    spec,
                    "sets needs one request size (the chunk): size=N, not a range",
                ));
            }
            let p = sets::Sets::new(len, c.size.0, n as u64, m as u64, theta, &mut rng);
            make(p, rng, &c, (offset, len))
        }
        "" => {
            return Err(Error::workload(
                spec,
                format!("empty workload name; known: {NAMES}"),
            ))
        }
        other => {
            return Err(Error::workload(
                spec,
                format!("unknown workload '{other}'; known: {NAMES}"),
            ))
        }
    };
    Ok((w, c))
}

fn check_frac(spec: &str, what: &str, v: f64) -> Result<f64> {
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(Error::workload(
            spec,
            format!("{what} = {v} must be a fraction in (0, 1)"),
        ))
    }
}

/// Build the workload described by `spec` over a device of `logical_blocks`.
pub fn parse(
    spec: &str,
    logical_blocks: u64,
    block_size: u32,
    seed: u64,
) -> Result<Box<dyn Workload>> {
    let spec_t = spec.trim();
    if let Some(rest) = spec_t.strip_prefix("mix:") {
        return mix::parse(spec, rest, logical_blocks, block_size, seed);
    }
    let (w, c) = parse_single(
        spec,
        spec_t,
        (0, logical_blocks),
        block_size,
        Rng::derive(seed, 0),
    )?;
    match c.region {
        None => Ok(w),
        Some(f) => {
            let len = ((f * logical_blocks as f64) as u64).max(1);
            Ok(parse_single(spec, spec_t, (0, len), block_size, Rng::derive(seed, 0))?.0)
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_grammar_shown_is_the_grammar_read() {
        // Each spec of the help text, and its examples, as the parser reads them.
        for spec in [
            "uniform",
            "zipf:0.8,scramble=0",
            "hotcold:0.9:0.1",
            "seq",
            "phase:0.9:0.1:1.0,move=slide",
            "sets:64:16:1.0,size=4",
            "mix:zipf:1.0,size=8,region=0.5+seq,size=64k,iops=500",
            "uniform,size=4k-1m,reads=0.3,arrivals=mmpp:10:1:0.2",
            "uniform,arrivals=onoff:1:2:0.5",
            "uniform,schedule=600:110000",
        ] {
            let name = spec.split([':', ',']).next().unwrap();
            assert!(
                GRAMMAR.contains(&format!("\n  {name}")),
                "{name} is not in GRAMMAR"
            );
            parse(spec, 1 << 16, 4096, 1).unwrap_or_else(|e| panic!("{spec}: {e}"));
        }
        assert!(GRAMMAR.contains("mix:zipf:1.0,size=8,region=0.5+seq,size=64k,iops=500"));
    }
    use super::*;

    fn take(spec: &str, n: usize) -> Vec<Request> {
        let mut w = parse(spec, 10_000, 4096, 42).unwrap();
        (0..n).map(|_| w.next_request()).collect()
    }

    #[test]
    fn every_spec_stays_in_range_with_monotone_time() {
        for spec in [
            "uniform",
            "zipf",
            "zipf:0.8",
            "hotcold:0.9:0.1",
            "seq,size=8",
            "phase:0.8:0.2:0.5",
            "uniform,size=1-16,reads=0.3,iops=500",
            "zipf:1.2,scramble=0,region=0.5",
            "mix:zipf:1.0,size=4,region=0.5+seq,size=32,iops=100+uniform",
            "zipf,arrivals=mmpp",
            "uniform,arrivals=onoff:0.01:0.02:1",
            "phase:0.9:0.05:0.2,move=slide",
            "sets:8:4:0.5,size=8",
            "mix:zipf,schedule=0.5:10+uniform,schedule=0.5:01,arrivals=mmpp:5:0.1",
        ] {
            let reqs = take(spec, 20_000);
            let mut t = 0;
            for r in &reqs {
                assert!(
                    r.blocks >= 1 && r.lba + r.blocks as u64 <= 10_000,
                    "{spec}: {r:?}"
                );
                assert!(r.time_ns >= t, "{spec}: time went back");
                t = r.time_ns;
            }
        }
    }

    #[test]
    fn same_seed_same_requests() {
        assert_eq!(
            take("mix:zipf+uniform,size=2-8", 1000),
            take("mix:zipf+uniform,size=2-8", 1000)
        );
        let mut a = parse("zipf", 10_000, 4096, 1).unwrap();
        let mut b = parse("zipf", 10_000, 4096, 2).unwrap();
        assert!((0..100).any(|_| a.next_request() != b.next_request()));
    }

    #[test]
    fn hotcold_sends_w_of_requests_to_s_of_space() {
        let reqs = take("hotcold:0.8:0.25", 100_000);
        let hot = reqs.iter().filter(|r| r.lba < 2_500).count() as f64 / reqs.len() as f64;
        assert!((hot - 0.8).abs() < 0.01, "{hot}");
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let reqs = take("seq,size=3000", 5);
        let starts: Vec<u64> = reqs.iter().map(|r| r.lba).collect();
        assert_eq!(starts, vec![0, 3000, 6000, 9000, 0]);
        assert_eq!(
            reqs[3].blocks, 1000,
            "the request before the wrap is cut at the end"
        );
    }

    #[test]
    fn reads_and_sizes_follow_their_keys() {
        let reqs = take("uniform,reads=0.25,size=64k", 40_000);
        let reads = reqs.iter().filter(|r| r.op == Op::Read).count() as f64 / reqs.len() as f64;
        assert!((reads - 0.25).abs() < 0.01, "{reads}");
        assert!(reqs.iter().all(|r| r.blocks == 16));
    }

    #[test]
    fn poisson_arrivals_have_the_asked_rate() {
        let reqs = take("uniform,iops=1000", 50_000);
        let rate = reqs.len() as f64 / (reqs.last().unwrap().time_ns as f64 / 1e9);
        assert!((rate - 1000.0).abs() < 20.0, "{rate}");
    }

    #[test]
    fn bursty_arrivals_keep_the_addresses() {
        let plain = take("zipf:0.9,size=1-4", 2000);
        let bursty = take("zipf:0.9,size=1-4,arrivals=mmpp", 2000);
        for (a, b) in plain.iter().zip(&bursty) {
            assert_eq!((a.lba, a.blocks, a.op), (b.lba, b.blocks, b.op));
        }
        assert!(plain
            .iter()
            .zip(&bursty)
            .any(|(a, b)| a.time_ns != b.time_ns));
    }

    #[test]
    fn a_sliding_hot_spot_moves_by_its_length() {
        // 10% hot spot, moving every 0.1 drive-writes of the region.
        let reqs = take("phase:0.99:0.1:0.1,move=slide", 10_000);
        for k in 0..10u64 {
            let period = &reqs[(k * 1000 + 50) as usize..(k * 1000 + 950) as usize];
            let inside = period.iter().filter(|r| r.lba / 1000 == k).count();
            assert!(
                inside as f64 > 0.95 * period.len() as f64,
                "period {k}: {inside}"
            );
        }
    }

    #[test]
    fn scheduled_tenants_take_turns() {
        let reqs = take(
            "mix:uniform,schedule=1:10,iops=100+uniform,schedule=1:01,iops=100",
            400,
        );
        for r in &reqs {
            let phase = r.time_ns / 1_000_000_000 % 2;
            assert_eq!(phase, r.tenant as u64, "{r:?}");
        }
    }

    #[test]
    fn bad_specs_name_the_problem() {
        for (spec, needle) in [
            ("zipfian", "unknown workload 'zipfian'"),
            ("zipf:abc", "not a number"),
            ("zipf:-1", "must be >= 0"),
            ("hotcold:1.5:0.1", "(0, 1)"),
            ("uniform,foo=1", "unknown key 'foo'"),
            ("uniform,size=0", "size"),
            ("uniform,size=9-3", "empty"),
            ("uniform,iops=-5", "iops"),
            ("uniform,reads=2", "reads"),
            ("uniform:3", "at most 0"),
            ("uniform,size", "KEY=VALUE"),
            ("", "empty workload name"),
            ("mix:", "at least one tenant"),
            ("mix:uniform,region=0.7+zipf,region=0.6", "regions"),
            ("uniform,size=20000", "exceeds the region"),
            ("uniform,arrivals=burst", "arrivals 'burst'"),
            ("uniform,move=slide", "phase only"),
            ("phase,move=hop", "jump or slide"),
            ("uniform,schedule=600:00", "schedule"),
            ("sets:0", "must be >= 1"),
            ("sets,size=1-4", "one request size"),
        ] {
            let e = match parse(spec, 10_000, 4096, 1) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{spec} parsed"),
            };
            assert!(e.contains(needle), "{spec}: {e}");
        }
    }
}
