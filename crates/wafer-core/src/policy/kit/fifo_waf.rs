//! Desnoyers' FIFO model of a log cleaned in FIFO order (SYSTOR'12), with
//! the greedy correction κ = 1 + 1/(2B): the WAF of a group at spare factor
//! α = physical / valid blocks, uniformly written or with a hot and a cold
//! share. MiDAS's MCAM takes its last group's WAF from it
//! (`midas/model.rs`), DOGI's group configuration its last group's
//! (`dogi/config.rs`, §4.3).

/// Largest WAF the last-group solver reports before calling a configuration hopeless.
const WAF_LIMIT: f64 = 1e6;

/// WAF of a group collected by greedy with spare factor `alpha` (physical /
/// valid blocks), `r` of its writes going to the share `f` of its blocks:
/// the hot/cold FIFO fixed point W = 1 + Σ_c r_c / (exp(r_c·α / (f_c·W)) - 1)
/// at α·κ, divided by κ = 1 + 1/(2B). `None` if α <= 1 or beyond reach.
pub fn last_group_waf(alpha: f64, r: f64, f: f64, seg_blocks: f64) -> Option<f64> {
    if alpha.is_nan() || alpha <= 1.0 {
        return None;
    }
    let kappa = 1.0 + 1.0 / (2.0 * seg_blocks);
    fifo_hot_cold(alpha * kappa, r, f).map(|w| (w / kappa).max(1.0))
}

/// Lambert's W on its principal branch, W0(z) for z >= -1/e (the w >= -1
/// with w·e^w = z), by Halley's iteration; `None` below -1/e.
pub fn lambert_w0(z: f64) -> Option<f64> {
    const INV_E: f64 = 0.367_879_441_171_442_33;
    if z.is_nan() || z < -INV_E {
        return None;
    }
    if z == 0.0 {
        return Some(0.0);
    }
    // Start from the branch-point series near -1/e, else from ln(1 + z).
    let mut w = if z < -0.3 {
        let p = (2.0 * (1.0 + std::f64::consts::E * z)).max(0.0).sqrt();
        -1.0 + p - p * p / 3.0 + 11.0 / 72.0 * p * p * p
    } else {
        (1.0 + z).ln()
    };
    for _ in 0..50 {
        let e = w.exp();
        let f = w * e - z;
        let d = e * (w + 1.0);
        if d.abs() < 1e-300 {
            break;
        }
        let step = f / (d - (w + 2.0) * f / (2.0 * (w + 1.0)));
        w -= step;
        if step.abs() <= 1e-15 * (1.0 + w.abs()) {
            break;
        }
    }
    Some(w)
}

/// Desnoyers' FIFO model (SYSTOR'12) of a uniformly written log cleaned in
/// FIFO order with spare factor `alpha` (physical / valid blocks): the
/// victims' valid ratio v solves v = e^{-α(1-v)}, so
/// WAF = 1 / (1 - v) = α / (α + W0(-α·e^{-α})). `None` if α <= 1.
pub fn fifo_waf(alpha: f64) -> Option<f64> {
    if alpha.is_nan() || alpha <= 1.0 {
        return None;
    }
    if alpha > 700.0 {
        return Some(1.0);
    }
    let w = lambert_w0(-alpha * (-alpha).exp())?;
    let waf = alpha / (alpha + w);
    (waf.is_finite() && waf <= WAF_LIMIT).then_some(waf.max(1.0))
}

/// [`last_group_waf`] of a uniformly written group (no hot/cold split),
/// in closed form: Desnoyers' FIFO fixed point ([`fifo_waf`]) at α·κ,
/// divided by κ = 1 + 1/(2B) (the greedy correction).
pub fn uniform_group_waf(alpha: f64, seg_blocks: f64) -> Option<f64> {
    let kappa = 1.0 + 1.0 / (2.0 * seg_blocks);
    fifo_waf(alpha * kappa).map(|w| (w / kappa).max(1.0))
}

/// The smallest W > 1 solving the hot/cold FIFO equation (bracket by
/// doubling, then bisection).
fn fifo_hot_cold(alpha: f64, r: f64, f: f64) -> Option<f64> {
    let term = |x: f64, y: f64, w: f64| {
        if x <= 0.0 || y <= 0.0 {
            0.0
        } else {
            x / (x * alpha / (y * w)).exp_m1()
        }
    };
    let g = |w: f64| 1.0 + term(r, f, w) + term(1.0 - r, 1.0 - f, w) - w;
    let (mut lo, mut hi) = (1.0, 2.0);
    if g(lo) <= 0.0 {
        return Some(1.0);
    }
    while g(hi) > 0.0 {
        lo = hi;
        hi *= 2.0;
        if hi > WAF_LIMIT {
            return None;
        }
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            lo = mid
        } else {
            hi = mid
        }
    }
    Some(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_class_last_group_is_desnoyers_fifo() {
        // v = exp(-α(1 - v)) with W = 1/(1 - v); at α = 1.1 W = 5.6775
        let w = fifo_hot_cold(1.1, 1.0, 1.0).unwrap();
        let v = 1.0 - 1.0 / w;
        assert!((v - (-1.1 * (1.0 - v)).exp()).abs() < 1e-9);
        assert!((w - 5.6775).abs() < 1e-3, "{w}");
        // a hot/cold split with r = f is the same device
        let w2 = fifo_hot_cold(1.1, 0.3, 0.3).unwrap();
        assert!((w - w2).abs() < 1e-6, "{w} vs {w2}");
        // skew helps
        // mixing hot and cold in one FIFO log costs more (Jensen on e^-rate·T)
        assert!(fifo_hot_cold(1.1, 0.9, 0.1).unwrap() > w);
        assert!(last_group_waf(1.0, 1.0, 1.0, 64.0).is_none());
    }

    #[test]
    fn lambert_w_closed_form_is_the_fifo_fixed_point() {
        for z in [-0.367_879, -0.3, -0.1, 0.0, 0.5, 3.0] {
            let w = lambert_w0(z).unwrap();
            assert!((w * w.exp() - z).abs() < 1e-9, "W0({z}) = {w}");
            assert!(w >= -1.0);
        }
        assert!(lambert_w0(-0.5).is_none());
        for alpha in [1.02, 1.1, 1.28, 2.0, 5.0] {
            let closed = fifo_waf(alpha).unwrap();
            let fixed = fifo_hot_cold(alpha, 1.0, 1.0).unwrap();
            assert!(
                (closed - fixed).abs() < 1e-6,
                "α {alpha}: {closed} vs {fixed}"
            );
            let corrected = uniform_group_waf(alpha, 64.0).unwrap();
            let split = last_group_waf(alpha, 1.0, 1.0, 64.0).unwrap();
            assert!((corrected - split).abs() < 1e-6, "α {alpha}");
        }
        assert!((fifo_waf(1.1).unwrap() - 5.6775).abs() < 1e-3);
        assert!(fifo_waf(1.0).is_none());
    }
}
