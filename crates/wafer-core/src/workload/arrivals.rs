//! Bursty arrival processes (`arrivals=` key): real block traces have a
//! lag-1 autocorrelation of write inter-arrival times of 0.8–1.0 (FIOS
//! Table 3), Poisson arrivals have ~0, and FIOS's feature selection keys on
//! it (ACF High selects A and C).
//!
//! * `mmpp[:R[:T[:CV]]]`: a two-state Markov-modulated process. The states
//!   alternate after exponential sojourns of mean T seconds (default 1); the
//!   fast state's rate is R times the slow one's (default 10), and the
//!   time-average rate is `iops`. Inside a state, gaps are Gamma with
//!   coefficient of variation CV (default 0.2; CV = 1 is a textbook MMPP
//!   with Poisson states, whose lag-1 ACF cannot exceed 0.5).
//! * `onoff[:ON[:OFF[:CV]]]`: on periods of mean ON seconds (default 1) with
//!   requests, off periods of mean OFF seconds (default 1) without; the rate
//!   while on is `iops` · (ON + OFF) / ON, so the mean rate is `iops`.
//!
//! The arrival process has its own random stream, and the generator still
//! draws (and discards) the Poisson gap from its own: the addresses of
//! `SPEC,arrivals=X` are those of `SPEC`, only the times differ.

use crate::rng::Rng;

/// A parsed `arrivals=` value.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrivalSpec {
    /// The default.
    Poisson,
    /// Rate ratio, mean sojourn [s], CV.
    Mmpp(f64, f64, f64),
    /// Mean on [s], mean off [s], CV.
    OnOff(f64, f64, f64),
}

impl ArrivalSpec {
    /// Parse `poisson`, `mmpp[:R[:T[:CV]]]`, `onoff[:ON[:OFF[:CV]]]`.
    pub fn parse(v: &str) -> Result<Self, String> {
        let mut w = v.split(':');
        let name = w.next().unwrap_or("");
        let args: Vec<&str> = w.collect();
        let nums = |defaults: [f64; 3]| -> Result<[f64; 3], String> {
            if args.len() > 3 {
                return Err(format!("arrivals '{v}' takes at most 3 numbers"));
            }
            let mut out = defaults;
            for (i, a) in args.iter().enumerate() {
                out[i] = a
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| format!("arrivals '{v}': '{a}' must be a number > 0"))?;
            }
            Ok(out)
        };
        match name {
            "poisson" if args.is_empty() => Ok(ArrivalSpec::Poisson),
            "mmpp" => {
                let [r, t, cv] = nums([10.0, 1.0, 0.2])?;
                if r < 1.0 {
                    return Err(format!("arrivals '{v}': rate ratio {r} must be >= 1"));
                }
                Ok(ArrivalSpec::Mmpp(r, t, cv))
            }
            "onoff" => {
                let [on, off, cv] = nums([1.0, 1.0, 0.2])?;
                Ok(ArrivalSpec::OnOff(on, off, cv))
            }
            _ => Err(format!(
                "arrivals '{v}': use poisson, mmpp[:RATIO[:SOJOURN_S[:CV]]] or onoff[:ON_S[:OFF_S[:CV]]]"
            )),
        }
    }
}

/// A Gamma(shape k, mean m) variate: Marsaglia & Tsang ("A simple method
/// for generating gamma variables", ACM TOMS 2000) for k >= 1, boosted by
/// U^(1/k) below.
fn gamma(rng: &mut Rng, k: f64, mean: f64) -> f64 {
    if (k - 1.0).abs() < 1e-12 {
        return rng.exponential(mean);
    }
    let (shape, boost) = if k < 1.0 {
        (k + 1.0, (1.0 - rng.next_f64()).powf(1.0 / k))
    } else {
        (k, 1.0)
    };
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.next_f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v * boost * mean / k;
        }
    }
}

/// A standard normal variate (Box–Muller, one of the pair).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A running bursty arrival process.
pub(crate) struct Arrivals {
    rng: Rng,
    /// Mean gap in state 0 and 1 [ns]; `INFINITY`: no arrivals (off).
    gap: [f64; 2],
    /// Mean sojourn in state 0 and 1 [ns].
    stay: [f64; 2],
    /// Gamma shape 1/CV².
    shape: f64,
    state: usize,
    /// When the current state ends [ns].
    until: f64,
}

impl Arrivals {
    /// For `spec` at mean rate `iops`; `None` for Poisson.
    pub(crate) fn new(spec: &ArrivalSpec, iops: f64, rng: Rng) -> Option<Self> {
        let (gap, stay, cv) = match *spec {
            ArrivalSpec::Poisson => return None,
            ArrivalSpec::Mmpp(r, t, cv) => {
                let fast = 2.0 * iops * r / (r + 1.0);
                let slow = 2.0 * iops / (r + 1.0);
                ([1e9 / fast, 1e9 / slow], [t * 1e9, t * 1e9], cv)
            }
            ArrivalSpec::OnOff(on, off, cv) => {
                let rate = iops * (on + off) / on;
                ([1e9 / rate, f64::INFINITY], [on * 1e9, off * 1e9], cv)
            }
        };
        let mut a = Arrivals {
            rng,
            gap,
            stay,
            shape: 1.0 / (cv * cv),
            state: 0,
            until: 0.0,
        };
        a.until = a.rng.exponential(a.stay[0]);
        Some(a)
    }

    /// The time of the next arrival after `now` [ns].
    pub(crate) fn next(&mut self, now: f64) -> f64 {
        let mut t = now;
        loop {
            if self.gap[self.state].is_finite() {
                let g = gamma(&mut self.rng, self.shape, self.gap[self.state]);
                if t + g <= self.until {
                    return t + g;
                }
            }
            // The state ends first: move to its end and switch.
            t = t.max(self.until);
            self.state ^= 1;
            self.until = t + self.rng.exponential(self.stay[self.state]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lag1_acf(gaps: &[f64]) -> f64 {
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / n;
        let cov = gaps
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / (n - 1.0);
        cov / var
    }

    fn gaps(spec: &ArrivalSpec, iops: f64, n: usize) -> Vec<f64> {
        let mut a = Arrivals::new(spec, iops, Rng::new(3)).unwrap();
        let mut t = 0.0;
        (0..n)
            .map(|_| {
                let nt = a.next(t);
                let g = nt - t;
                t = nt;
                g
            })
            .collect()
    }

    #[test]
    fn parse_forms() {
        assert_eq!(ArrivalSpec::parse("poisson").unwrap(), ArrivalSpec::Poisson);
        assert_eq!(
            ArrivalSpec::parse("mmpp").unwrap(),
            ArrivalSpec::Mmpp(10.0, 1.0, 0.2)
        );
        assert_eq!(
            ArrivalSpec::parse("onoff:2:3").unwrap(),
            ArrivalSpec::OnOff(2.0, 3.0, 0.2)
        );
        assert!(ArrivalSpec::parse("mmpp:0.5").is_err());
        assert!(ArrivalSpec::parse("mmpp:x").is_err());
        assert!(ArrivalSpec::parse("burst").is_err());
    }

    #[test]
    fn mmpp_keeps_the_mean_rate_and_has_high_acf() {
        // Short sojourns: many of them, so the measured rate is close.
        let g = gaps(&ArrivalSpec::Mmpp(10.0, 0.05, 0.2), 10_000.0, 400_000);
        let rate = g.len() as f64 / (g.iter().sum::<f64>() * 1e-9);
        assert!((rate / 10_000.0 - 1.0).abs() < 0.1, "rate {rate}");
        let acf = lag1_acf(&g);
        assert!(acf > 0.8, "ACF {acf}");
        // Poisson-in-state (CV 1) caps near 0.4.
        let acf1 = lag1_acf(&gaps(
            &ArrivalSpec::Mmpp(10.0, 0.05, 1.0),
            10_000.0,
            400_000,
        ));
        assert!(acf1 < 0.5 && acf1 > 0.2, "ACF {acf1}");
    }

    #[test]
    fn onoff_keeps_the_mean_rate() {
        let g = gaps(&ArrivalSpec::OnOff(0.01, 0.03, 1.0), 1_000.0, 200_000);
        let rate = g.len() as f64 / (g.iter().sum::<f64>() * 1e-9);
        assert!((rate / 1_000.0 - 1.0).abs() < 0.1, "rate {rate}");
    }

    #[test]
    fn gamma_mean_and_cv() {
        let mut rng = Rng::new(1);
        for (k, m) in [(25.0, 2.0), (0.5, 3.0), (1.0, 1.0)] {
            let xs: Vec<f64> = (0..200_000).map(|_| gamma(&mut rng, k, m)).collect();
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
            assert!((mean / m - 1.0).abs() < 0.02, "k {k}: mean {mean}");
            let cv2 = var / (mean * mean);
            assert!((cv2 * k - 1.0).abs() < 0.05, "k {k}: cv² {cv2}");
        }
    }
}
