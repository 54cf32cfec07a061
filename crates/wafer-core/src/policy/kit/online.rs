//! What every learned policy does around its model: sample writes for
//! training ([`Sampler`]), retrain on a fixed period through the process's
//! trainer, count the training time, and hold an error (a missing trainer,
//! diverged training) for the engine to stop on.
//!
//! Training runs beside the replay, as DOGI trains on a host core while the
//! I/O path keeps going (§4.2.2): [`Online::spawn`] starts it on a thread
//! and [`Online::ready`] hands the model over at a fixed *logical* time, the
//! training's start plus the policy's deployment delay [user writes]. The
//! replay waits there only if the thread has not finished, so the same
//! input and seed give the same run however fast the thread is. With a
//! delay of 0 the training runs in place (synchronously).

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::sampler::Sampler;
use crate::error::{Error, Result};
use crate::model::train::{self, TrainSpec, Trainer, TrainingStats};

const NO_SLOT: u32 = u32::MAX;

/// A trained model (type-erased) and its last loss, or the training's error.
type Trained = Result<(Box<dyn Any + Send>, f32)>;

/// A training's outcome and its wall time [s].
type Outcome = (Trained, f64);

enum Run {
    /// On its thread.
    Running(JoinHandle<Outcome>),
    /// Finished (a synchronous training, or joined early).
    Done(Outcome),
}

/// One training, from its start to its deployment.
struct Job {
    /// Logical time at which its model is deployed [user writes].
    deploy_at: u64,
    /// Logical time it started at [user writes] (named in its error).
    started: u64,
    examples: usize,
    run: Run,
}

/// Online-training state of one policy.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Online {
    #[serde(with = "crate::codec::static_str")]
    policy: crate::codec::Name,
    /// The sampled writes.
    pub samples: Sampler,
    every: u64,
    seen: u64,
    retrain_every: u64,
    next_train: u64,
    /// Logical time from a training's start to its deployment [user writes];
    /// 0: synchronous.
    deploy_delay: u64,
    #[serde(skip)]
    job: Option<Job>,
    /// Trainings so far and their time.
    pub training: TrainingStats,
    #[serde(skip)]
    error: Option<Error>,
    /// Sample id (or none) of each block of the batch being placed, in order.
    pending: Vec<u32>,
    cursor: usize,
    /// The workload has started: writes before it (the prefill) are
    /// neither sampled nor trained on.
    started: bool,
    /// Set when this state is dropped: a training still running then is
    /// stopped (see [`TrainSpec::cancel`]).
    #[serde(skip)]
    cancel: Arc<AtomicBool>,
}

impl Drop for Online {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Online {
    /// For `policy`: samples of `width` values, at most `cap`, one in
    /// `sample_every` offered writes; retraining every `retrain_every` user
    /// writes (0: never, which needs a model given beforehand).
    pub fn new(
        policy: &'static str,
        samples: Sampler,
        sample_every: u32,
        retrain_every: u64,
        has_model: bool,
    ) -> Result<Self> {
        if retrain_every == 0 && !has_model {
            return Err(Error::Parameter {
                policy: policy.into(),
                reason: "retrain 0 (no online training) needs a trained model: give model=PATH"
                    .into(),
            });
        }
        Ok(Online {
            policy,
            samples,
            every: sample_every.max(1) as u64,
            seen: 0,
            retrain_every,
            next_train: if retrain_every == 0 {
                u64::MAX
            } else {
                retrain_every
            },
            deploy_delay: 0,
            job: None,
            training: TrainingStats::default(),
            error: None,
            pending: Vec::new(),
            cursor: 0,
            started: false,
            cancel: Arc::default(),
        })
    }

    /// Train in the background: a training started at logical time t is
    /// deployed at t + `delay` [user writes] (at most one retraining period,
    /// so one training runs at a time); 0 trains synchronously.
    pub fn with_deploy_delay(mut self, delay: u64) -> Self {
        self.deploy_delay = if self.retrain_every == 0 {
            delay
        } else {
            delay.min(self.retrain_every)
        };
        self
    }

    /// The logical delay from a training's start to its deployment [user writes].
    pub fn deploy_delay(&self) -> u64 {
        self.deploy_delay
    }

    /// The workload starts at `now` (after the prefill, if any): sampling
    /// begins and the first retraining is one period later.
    pub fn start(&mut self, now: u64) {
        self.started = true;
        if self.retrain_every > 0 {
            self.next_train = now.saturating_add(self.retrain_every);
        }
    }

    /// Whether a retraining is due at `now` (then the next one is scheduled).
    pub fn due(&mut self, now: u64) -> bool {
        if !self.started || now < self.next_train {
            return false;
        }
        self.next_train = self.next_train.saturating_add(self.retrain_every);
        true
    }

    /// The trainer, or `None` with the error kept for the engine.
    pub fn trainer(&mut self) -> Option<&'static dyn Trainer> {
        match train::trainer(self.policy) {
            Ok(t) => Some(t),
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }

    fn failed(&mut self, now: u64, e: Error) {
        self.error = Some(Error::Model {
            file: format!("{} training at logical time {now}", self.policy),
            reason: e.to_string(),
        });
    }

    /// Run one training of `examples` examples here and now (timed and
    /// counted); a failure is kept as the error that stops the run.
    // The synchronous form, for policies that train in place; the policies
    // on this branch all use `spawn`.
    #[allow(dead_code)]
    pub fn train<T>(
        &mut self,
        now: u64,
        examples: usize,
        f: impl FnOnce() -> Result<(T, f32)>,
    ) -> Option<T> {
        match self.training.time(examples, f) {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed(now, e);
                None
            }
        }
    }

    /// A training has started and its model is not deployed yet: a
    /// checkpoint waits for it (a model on its way is not state yet).
    pub fn in_flight(&self) -> bool {
        self.job.is_some()
    }

    /// Start one training of `examples` examples at `now`, on a thread
    /// (synchronously with no deployment delay). Its model comes out of
    /// [`Online::ready`] at `now` + the delay. A training still waiting
    /// for its deployment is deployed first by the caller (`ready` before
    /// `due`), so at most one runs.
    pub fn spawn<T: Send + 'static>(
        &mut self,
        now: u64,
        examples: usize,
        job: impl FnOnce() -> Result<(T, f32)> + Send + 'static,
    ) {
        let boxed = move || -> Outcome {
            let t = Instant::now();
            let r = job().map(|(v, loss)| (Box::new(v) as Box<dyn Any + Send>, loss));
            (r, t.elapsed().as_secs_f64())
        };
        let run = if self.deploy_delay == 0 {
            Run::Done(boxed())
        } else {
            let slow = train::slowdown();
            let spawned = std::thread::Builder::new()
                .name(format!("{}-training", self.policy))
                .spawn(move || {
                    if !slow.is_zero() {
                        std::thread::sleep(slow);
                    }
                    boxed()
                });
            match spawned {
                Ok(h) => Run::Running(h),
                Err(e) => Run::Done((
                    Err(Error::Simulation(format!(
                        "cannot start a training thread: {e}"
                    ))),
                    0.0,
                )),
            }
        };
        self.job = Some(Job {
            deploy_at: now.saturating_add(self.deploy_delay),
            started: now,
            examples,
            run,
        });
    }

    /// The model of the training whose deployment time `now` has reached,
    /// once (the replay waits here for a training that has not finished;
    /// the wait is counted). A failed training's error is kept for the
    /// engine and gives `None`.
    pub fn ready<T: 'static>(&mut self, now: u64) -> Option<T> {
        if self.job.as_ref().is_none_or(|j| now < j.deploy_at) {
            return None;
        }
        let job = self.job.take()?;
        let (trained, seconds) = match job.run {
            Run::Done(o) => o,
            Run::Running(h) => {
                let t = Instant::now();
                let o = h.join().unwrap_or_else(|_| {
                    (
                        Err(Error::Model {
                            file: "training".into(),
                            reason: "the training thread panicked".into(),
                        }),
                        0.0,
                    )
                });
                self.training.waited_seconds += t.elapsed().as_secs_f64();
                o
            }
        };
        self.training.seconds += seconds;
        match trained {
            Ok((model, loss)) => {
                self.training.trainings += 1;
                self.training.last_examples = job.examples as u64;
                self.training.last_loss = Some(loss);
                match model.downcast::<T>() {
                    Ok(m) => Some(*m),
                    Err(_) => {
                        self.failed(
                            job.started,
                            Error::Simulation("a trained model of another type".into()),
                        );
                        None
                    }
                }
            }
            Err(e) => {
                self.failed(job.started, e);
                None
            }
        }
    }

    /// The seed and settings of the next training.
    pub fn spec(&self, epochs: usize, batch: usize, lr: f64, seed: u64) -> TrainSpec {
        TrainSpec {
            epochs,
            batch,
            lr,
            seed: seed.wrapping_add(self.training.trainings),
            cancel: Some(self.cancel.clone()),
        }
    }

    /// A new batch of user writes is being placed.
    pub fn begin_batch(&mut self) {
        self.pending.clear();
        self.cursor = 0;
    }

    /// Offer the next block of the batch (in order) for sampling: every
    /// `sample_every`-th offered block is kept with input `x` and `pred`.
    pub fn offer(&mut self, x: &[f32], pred: u8, time: u64, lba: u32) {
        if !self.started {
            self.pending.push(NO_SLOT);
            return;
        }
        self.seen += 1;
        let slot = if self.seen.is_multiple_of(self.every) {
            self.samples.push(x, pred, time, lba)
        } else {
            NO_SLOT
        };
        self.pending.push(slot);
    }

    /// The next block of the batch is not offered for sampling.
    pub fn skip(&mut self) {
        self.pending.push(NO_SLOT);
    }

    /// Whether the offered block `ahead` places after the next one (0: the
    /// next) will be sampled.
    pub fn will_sample(&self, ahead: u64) -> bool {
        self.started && (self.seen + 1 + ahead).is_multiple_of(self.every)
    }

    /// The next block of the batch was applied at `time` (call in order);
    /// returns its position in the batch.
    #[inline]
    pub fn written(&mut self, lba: u32, time: u64) -> usize {
        let i = self.cursor;
        self.cursor += 1;
        let slot = self.pending[i];
        self.samples
            .written(lba, time, (slot != NO_SLOT).then_some(slot));
        i
    }

    /// The error to stop the run on, once.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn online(delay: u64) -> Online {
        Online::new("test", Sampler::new(1, 4, 4), 1, 100, false)
            .unwrap()
            .with_deploy_delay(delay)
    }

    #[test]
    fn dropping_the_state_cancels_its_trainings() {
        // A run that ends with a training in flight: the trainer's next
        // batch check fails, so the thread stops instead of running on.
        let o = online(30);
        let spec = o.spec(1, 1, 0.1, 1);
        assert!(spec.check().is_ok());
        drop(o);
        let e = spec.check().unwrap_err().to_string();
        assert!(e.contains("cancelled"), "{e}");
    }

    #[test]
    fn a_background_training_deploys_at_its_logical_time() {
        let mut o = online(30);
        o.start(0);
        assert!(!o.due(99) && o.due(100));
        o.spawn(100, 7, || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok((42u32, 0.5))
        });
        assert_eq!(o.ready::<u32>(129), None, "not before its time");
        assert_eq!(o.ready::<u32>(130), Some(42), "waits for the thread");
        assert_eq!(o.ready::<u32>(131), None, "once");
        assert_eq!(o.training.trainings, 1);
        assert_eq!(o.training.last_examples, 7);
        assert!(o.training.seconds >= 0.02);
    }

    #[test]
    fn no_delay_trains_in_place_and_errors_are_kept() {
        let mut o = online(0);
        o.spawn(5, 1, || Ok(("model", 0.1)));
        assert_eq!(o.ready::<&str>(5), Some("model"));
        let mut o = online(10);
        o.spawn(5, 1, || -> Result<(u8, f32)> {
            Err(Error::Simulation("boom".into()))
        });
        assert_eq!(o.ready::<u8>(15), None);
        let e = o.take_error().unwrap().to_string();
        assert!(e.contains("boom") && e.contains("logical time 5"), "{e}");
        // The delay is at most one retraining period.
        assert_eq!(online(1_000).deploy_delay(), 100);
    }
}
