//! Prediction accuracy against the annotated truth: a confusion matrix per
//! kind of write (user, GC) and the figures researchers quote from it.
//!
//! A predicting policy states lifetime classes by their upper bounds (see
//! [`crate::policy::Placement::class_bounds`]); the true class of a block is
//! the class whose range holds its actual lifetime (remaining lifetime for a
//! GC-written block), under the bounds in force when it was placed. So a GC
//! relocation is right when the block dies within the range of its
//! destination, as in DOGI §5.3.

use serde::Serialize;

/// Classes tracked at most; higher predicted or true classes fold into the last.
pub const MAX_CLASSES: usize = 32;

/// Counts of (true class, predicted class).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Confusion {
    n: usize,
    /// `m[t * MAX_CLASSES + p]`.
    m: Vec<u64>,
    bounds: Vec<u64>,
}

impl Confusion {
    /// Record one prediction.
    #[inline]
    pub fn record(&mut self, truth: usize, pred: usize) {
        if self.m.is_empty() {
            self.m = vec![0; MAX_CLASSES * MAX_CLASSES];
        }
        let (t, p) = (truth.min(MAX_CLASSES - 1), pred.min(MAX_CLASSES - 1));
        self.n = self.n.max(t + 1).max(p + 1);
        self.m[t * MAX_CLASSES + p] += 1;
    }

    /// Remember the latest class bounds, for the report.
    pub fn set_bounds(&mut self, bounds: &[u64]) {
        if self.bounds != bounds {
            self.bounds.clear();
            self.bounds.extend_from_slice(bounds);
        }
    }

    /// The figures, `None` with no prediction.
    pub fn report(&self) -> Option<ClassReport> {
        let n = self.n.max(self.bounds.len() + 1);
        let cell = |t: usize, p: usize| self.m.get(t * MAX_CLASSES + p).copied().unwrap_or(0);
        let total: u64 = (0..n)
            .flat_map(|t| (0..n).map(move |p| (t, p)))
            .map(|(t, p)| cell(t, p))
            .sum();
        if total == 0 {
            return None;
        }
        let correct: u64 = (0..n).map(|k| cell(k, k)).sum();
        let per_class: Vec<ClassScore> = (0..n)
            .map(|k| {
                let support: u64 = (0..n).map(|p| cell(k, p)).sum();
                let predicted: u64 = (0..n).map(|t| cell(t, k)).sum();
                let precision = ratio(cell(k, k), predicted);
                let recall = ratio(cell(k, k), support);
                ClassScore {
                    class: k,
                    support,
                    predicted,
                    precision,
                    recall,
                    f1: f1(precision, recall),
                }
            })
            .collect();
        let binary = (n == 2).then(|| {
            let s = &per_class[0];
            BinaryScore {
                precision: s.precision,
                recall: s.recall,
                f1: s.f1,
            }
        });
        let recalls: Vec<f64> = per_class.iter().filter_map(|c| c.recall).collect();
        let largest = per_class.iter().map(|c| c.support).max().unwrap_or(0);
        Some(ClassReport {
            predictions: total,
            correct,
            accuracy: correct as f64 / total as f64,
            majority: largest as f64 / total as f64,
            balanced_accuracy: recalls.iter().sum::<f64>() / recalls.len() as f64,
            classes: n,
            bounds: self
                .bounds
                .iter()
                .map(|&b| (b != u64::MAX).then_some(b))
                .collect(),
            confusion: (0..n)
                .map(|t| (0..n).map(|p| cell(t, p)).collect())
                .collect(),
            per_class,
            binary,
        })
    }
}

/// a / b, `None` when b is 0.
pub(crate) fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Harmonic mean of a precision and a recall (0 when both are 0).
pub(crate) fn f1(p: Option<f64>, r: Option<f64>) -> Option<f64> {
    match (p, r) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    }
}

/// Scores of one class.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ClassScore {
    /// Class index (0 = shortest lifetimes).
    pub class: usize,
    /// Blocks whose true class this is.
    pub support: u64,
    /// Blocks predicted in this class.
    pub predicted: u64,
    /// Right / predicted.
    pub precision: Option<f64>,
    /// Right / support (the class's accuracy).
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall.
    pub f1: Option<f64>,
}

/// Binary scores with class 0 (short-lived, "hot") as the positive class.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct BinaryScore {
    /// True hot / predicted hot.
    pub precision: Option<f64>,
    /// True hot found / all true hot.
    pub recall: Option<f64>,
    /// Harmonic mean of precision and recall.
    pub f1: Option<f64>,
}

/// Accuracy of one kind of prediction over a run.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ClassReport {
    /// Blocks predicted.
    pub predictions: u64,
    /// Blocks whose true class was predicted.
    pub correct: u64,
    /// correct / predictions.
    pub accuracy: f64,
    /// The accuracy of always predicting the most common true class (the
    /// largest class's share): what an accuracy must beat to say the
    /// predictions carry information. A skewed class mix makes a high
    /// accuracy cheap, a balanced one makes it dear; Shiro's Table V scores
    /// traces whose short share runs from 3% to 98%.
    #[serde(default)]
    pub majority: f64,
    /// Mean per-class recall over the classes that occur: the accuracy with
    /// every true class weighted alike (0.5 for a constant guess between two).
    #[serde(default)]
    pub balanced_accuracy: f64,
    /// Number of classes.
    pub classes: usize,
    /// Upper bounds of the classes at the end of the run [user blocks]
    /// (`null`: unbounded).
    pub bounds: Vec<Option<u64>>,
    /// `confusion[true][predicted]`.
    pub confusion: Vec<Vec<u64>>,
    /// Per-class precision, recall (= per-class accuracy) and F1.
    pub per_class: Vec<ClassScore>,
    /// For two classes: precision, recall and F1 of class 0.
    pub binary: Option<BinaryScore>,
}

/// Accuracy of a run's predictions, for user-written and GC-written blocks.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct AccuracyReport {
    /// User-written blocks (lifetime from the write).
    pub user: Option<ClassReport>,
    /// GC-written blocks (remaining lifetime from the relocation).
    pub gc: Option<ClassReport>,
}

/// True class of a lifetime under `bounds`.
#[inline]
pub fn class_of(bounds: &[u64], lifetime: u64) -> usize {
    bounds.partition_point(|&b| b <= lifetime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_scores_by_hand() {
        let mut c = Confusion::default();
        c.set_bounds(&[10]);
        // 3 hot predicted hot, 1 hot predicted cold, 2 cold predicted hot, 4 cold right.
        for (t, p, k) in [(0, 0, 3), (0, 1, 1), (1, 0, 2), (1, 1, 4)] {
            for _ in 0..k {
                c.record(t, p);
            }
        }
        let r = c.report().unwrap();
        assert_eq!((r.predictions, r.correct), (10, 7));
        assert!((r.accuracy - 0.7).abs() < 1e-12);
        let b = r.binary.unwrap();
        assert!((b.precision.unwrap() - 0.6).abs() < 1e-12);
        assert!((b.recall.unwrap() - 0.75).abs() < 1e-12);
        assert!((b.f1.unwrap() - 2.0 * 0.6 * 0.75 / 1.35).abs() < 1e-12);
        assert_eq!(r.confusion, vec![vec![3, 1], vec![2, 4]]);
        // 6 of 10 are cold: always "cold" scores 0.6; recalls 0.75 and 4/6.
        assert!((r.majority - 0.6).abs() < 1e-12);
        assert!((r.balanced_accuracy - (0.75 + 4.0 / 6.0) / 2.0).abs() < 1e-12);
        assert_eq!(r.bounds, vec![Some(10)]);
    }

    #[test]
    fn class_ranges_are_half_open() {
        let b = [10, 100];
        assert_eq!(class_of(&b, 0), 0);
        assert_eq!(class_of(&b, 9), 0);
        assert_eq!(class_of(&b, 10), 1);
        assert_eq!(class_of(&b, 99), 1);
        assert_eq!(class_of(&b, u64::MAX), 2);
        assert_eq!(class_of(&[], 5), 0);
    }

    #[test]
    fn no_predictions_no_report() {
        assert!(Confusion::default().report().is_none());
    }
}
