//! `wafer._core`: the thin PyO3 layer over wafer-core. Configs come in and
//! results go out as JSON text (the engine's serde types), every call that
//! simulates releases the GIL, and every engine error becomes a subclass of
//! `wafer.WaferError`. No logic lives here that a Rust test cannot reach.
//!
//! A Rust panic (a bug) never crosses this boundary as PyO3's
//! `PanicException`, a `BaseException` that `except Exception` misses and
//! that cannot be pickled (a sweep's worker would take its whole pool
//! down): every entry point runs under [`shielded`], which turns it into
//! `InternalError` (a `RuntimeError`) with the panic's message and place.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, Once};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use wafer_core::policy::kit::kmeans::{kmeans, Init};
use wafer_core::policy::nodap::search;
use wafer_core::trace::{self, native, stats, Selection};
use wafer_core::{policy, victim, workload, Error, RunConfig};

create_exception!(
    wafer._core,
    WaferError,
    PyException,
    "Base class of every wafer error."
);
create_exception!(
    wafer._core,
    ConfigError,
    WaferError,
    "Impossible device or run configuration."
);
create_exception!(
    wafer._core,
    PolicyError,
    WaferError,
    "Unknown policy / victim selector or bad parameter."
);
create_exception!(
    wafer._core,
    WorkloadError,
    WaferError,
    "Workload spec that does not parse."
);
create_exception!(
    wafer._core,
    SimulationError,
    WaferError,
    "The simulation could not go on."
);
create_exception!(
    wafer._core,
    TraceError,
    WaferError,
    "A trace file that cannot be read (names file, line and reason)."
);

create_exception!(
    wafer._core,
    ResourceError,
    WaferError,
    "A run that needs more memory than the machine has (says what it needs and which flags help)."
);

create_exception!(
    wafer._core,
    ModelError,
    WaferError,
    "A model file that cannot be used (names the file and the tensor)."
);

create_exception!(
    wafer._core,
    CheckpointError,
    WaferError,
    "A checkpoint that cannot be written or resumed (names the file and the reason)."
);

create_exception!(
    wafer._core,
    InternalError,
    PyRuntimeError,
    "A bug in wafer: the engine panicked (the message says where; please report it)."
);

thread_local! {
    /// Depth of [`shielded`] calls on this thread: a panic inside one is
    /// reported by its `InternalError`, not printed by the panic hook.
    static SHIELDED: Cell<u32> = const { Cell::new(0) };
    /// Where the last shielded panic on this thread happened.
    static PANIC_AT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install (once) the panic hook that records where a shielded panic
/// happened instead of printing it; other panics (a training thread's)
/// go to the previous hook as before.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if SHIELDED.with(Cell::get) > 0 {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `f`, turning a panic into `InternalError` (see the module's doc).
/// The GIL may be held or released inside: the panic is caught on this
/// thread either way.
fn shielded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    SHIELDED.with(|d| d.set(d.get() + 1));
    let out = panic::catch_unwind(AssertUnwindSafe(f));
    SHIELDED.with(|d| d.set(d.get() - 1));
    out.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        let at = PANIC_AT
            .with(|p| p.borrow_mut().take())
            .map_or(String::new(), |a| format!(" at {a}"));
        Err(InternalError::new_err(format!(
            "internal error (a bug in wafer; please report it with the command that caused it): \
             {what}{at}"
        )))
    })
}

/// The error of a call on a simulation that an earlier call left broken.
fn poisoned() -> PyErr {
    InternalError::new_err(
        "this simulation stopped at an internal error earlier, so its state cannot be trusted: \
         start the run again",
    )
}

/// Call a Python progress callback `cb` with `event` (from a thread
/// without the GIL). A failing callback must not stop the work it follows,
/// but a KeyboardInterrupt raised in it (Ctrl-C) does.
fn call_progress(cb: &Option<Py<PyAny>>, event: &str) {
    if let Some(cb) = cb {
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, (event,)) {
                if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                    wafer_core::interrupt::request();
                }
            }
        });
    }
}

/// Bytes in `value_json` (a whole number, or a size such as "8GiB"), as
/// the engine reads a size; `ConfigError` naming `field`.
#[pyfunction]
fn parse_size(field: &str, value_json: &str) -> PyResult<u64> {
    shielded(|| {
        let v: serde_json::Value = from_json("run", value_json)?;
        wafer_core::run::spec::parse_size(field, &v).map_err(to_py)
    })
}

fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(msg),
        Error::Config { .. } => ConfigError::new_err(msg),
        Error::UnknownName { .. } | Error::Parameter { .. } => PolicyError::new_err(msg),
        Error::Workload { .. } => WorkloadError::new_err(msg),
        Error::Simulation(_) | Error::Invariant(_) => SimulationError::new_err(msg),
        Error::Trace { .. } => TraceError::new_err(msg),
        Error::Model { .. } => ModelError::new_err(msg),
        Error::Resources(_) => ResourceError::new_err(msg),
        Error::Checkpoint { .. } => CheckpointError::new_err(msg),
    }
}

/// A replay in progress: `Simulation(config_json)`, then `step(n)` until it
/// returns True, then `result_json()`. Usable from any thread; calls on one
/// simulation are serialised by its lock.
#[pyclass(module = "wafer._core")]
struct Simulation {
    inner: Mutex<wafer_core::Simulation>,
}

impl Simulation {
    /// The simulation, unless a call on it panicked (InternalError): its
    /// state may then be half-updated, and going on would give a result
    /// of no run at all.
    fn sim(&self) -> PyResult<MutexGuard<'_, wafer_core::Simulation>> {
        self.inner.lock().map_err(|_| poisoned())
    }
}

#[pymethods]
impl Simulation {
    /// Build the run `config_json`; `progress(event_json)` is called for
    /// each event of a long preparation (NoDaP's search trials).
    #[new]
    #[pyo3(signature = (config_json, progress=None))]
    fn new(py: Python<'_>, config_json: &str, progress: Option<Py<PyAny>>) -> PyResult<Self> {
        shielded(|| {
            let cfg: RunConfig = from_json("run", config_json)?;
            wafer_core::interrupt::clear();
            let report = move |event: &str| call_progress(&progress, event);
            let inner = py
                .detach(|| {
                    wafer_core::run::reporting(Box::new(report), || {
                        wafer_core::Simulation::new(cfg)
                    })
                })
                .map_err(to_py)?;
            Ok(Simulation {
                inner: Mutex::new(inner),
            })
        })
    }

    /// Advance by at most `budget` user blocks without holding the GIL.
    /// Returns True when the run is complete.
    fn step(&self, py: Python<'_>, budget: u64) -> PyResult<bool> {
        wafer_core::interrupt::clear();
        shielded(|| py.detach(|| self.sim()?.step(budget).map_err(to_py)))
    }

    /// User blocks written so far.
    #[getter]
    fn written(&self) -> PyResult<u64> {
        shielded(|| Ok(self.sim()?.written()))
    }

    /// User blocks the run will write.
    #[getter]
    fn total(&self) -> PyResult<u64> {
        shielded(|| Ok(self.sim()?.total()))
    }

    /// A timed run's preconditioning in progress: (user blocks of
    /// overwrites applied, of how many); None once timing started.
    #[getter]
    fn preconditioning(&self) -> PyResult<Option<(u64, u64)>> {
        shielded(|| Ok(self.sim()?.preconditioning()))
    }

    /// Logical blocks of the simulated device (once sized, e.g. by a
    /// trace's footprint): a drive-write.
    #[getter]
    fn logical_blocks(&self) -> PyResult<u64> {
        shielded(|| Ok(self.sim()?.engine().ftl.geo.logical_blocks as u64))
    }

    /// Run the FTL invariant checker now.
    fn check(&self) -> PyResult<()> {
        shielded(|| self.sim()?.engine().check().map_err(to_py))
    }

    /// Results so far, as JSON.
    fn result_json(&self) -> PyResult<String> {
        shielded(|| Ok(serde_json::to_string(&self.sim()?.result()).expect("results serialise")))
    }

    /// The run's configuration as given (a resumed run's: its
    /// checkpoint's), as JSON.
    #[getter]
    fn config_json(&self) -> PyResult<String> {
        shielded(|| {
            Ok(serde_json::to_string(self.sim()?.config()).expect("a run config serialises"))
        })
    }

    /// Whether a checkpoint can be taken now (not while a learned policy's
    /// training runs on its thread; a few requests later it can).
    #[getter]
    fn checkpoint_ready(&self) -> PyResult<bool> {
        shielded(|| Ok(self.sim()?.checkpoint_ready()))
    }

    /// Write the run's complete state to `path` atomically (CheckpointError
    /// if the run cannot be checkpointed, or not now).
    fn save_checkpoint(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        shielded(|| {
            py.detach(|| {
                self.sim()?
                    .save_checkpoint(std::path::Path::new(path))
                    .map_err(to_py)
            })
        })
    }

    /// The run checkpointed at `path`, ready to go on.
    #[staticmethod]
    fn resume(py: Python<'_>, path: &str) -> PyResult<Self> {
        shielded(|| {
            let inner = py
                .detach(|| wafer_core::Simulation::resume(std::path::Path::new(path)))
                .map_err(to_py)?;
            Ok(Simulation {
                inner: Mutex::new(inner),
            })
        })
    }

    /// Save the policy's current model as safetensors at `path`; False if
    /// the policy has none (not a learned policy, or not trained yet).
    fn save_model(&self, path: &str) -> PyResult<bool> {
        shielded(|| match self.sim()?.engine().policy_model() {
            Some(t) => t
                .save(std::path::Path::new(path))
                .map(|_| true)
                .map_err(to_py),
            None => Ok(false),
        })
    }
}

/// Several volumes replayed one after another, each its own log:
/// `MultiSimulation(config_json)` (a `MultiConfig`), then `step(n)` until it
/// returns True, then `result_json()`.
#[pyclass(module = "wafer._core")]
struct MultiSimulation {
    inner: Mutex<wafer_core::run::multi::MultiSimulation>,
}

impl MultiSimulation {
    /// The simulation, unless a call on it panicked (see `Simulation::sim`).
    fn sim(&self) -> PyResult<MutexGuard<'_, wafer_core::run::multi::MultiSimulation>> {
        self.inner.lock().map_err(|_| poisoned())
    }
}

#[pymethods]
impl MultiSimulation {
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        shielded(|| {
            let cfg: wafer_core::run::multi::MultiConfig = from_json("multi-volume", config_json)?;
            let inner = py
                .detach(|| wafer_core::run::multi::MultiSimulation::new(cfg))
                .map_err(to_py)?;
            Ok(MultiSimulation {
                inner: Mutex::new(inner),
            })
        })
    }

    /// Advance by at most `budget` user blocks (all volumes) without the GIL.
    /// Returns True when every volume's trace is replayed.
    fn step(&self, py: Python<'_>, budget: u64) -> PyResult<bool> {
        wafer_core::interrupt::clear();
        shielded(|| py.detach(|| self.sim()?.step(budget).map_err(to_py)))
    }

    /// User blocks written so far, all volumes.
    #[getter]
    fn written(&self) -> PyResult<u64> {
        shielded(|| Ok(self.sim()?.written()))
    }

    /// Results so far, as JSON.
    fn result_json(&self) -> PyResult<String> {
        shielded(|| Ok(serde_json::to_string(&self.sim()?.result()).expect("results serialise")))
    }
}

/// The registries, as JSON: `policies` (name, description, family,
/// needs_future, defaults), `families`, `composites` (the composite-name
/// grammar), `victims` and `setups`.
#[pyfunction]
fn registry_json() -> PyResult<String> {
    shielded(|| {
        Ok({
            let mut v = policy::registry_json();
            v["victims"] = victim::SELECTORS
                .iter()
                .map(|s| serde_json::json!({"name": s.name, "description": s.description}))
                .collect();
            v["setups"] = wafer_core::run::setup::SETUPS
                .iter()
                .map(|(n, d)| serde_json::json!({"name": n, "description": d}))
                .collect();
            v.to_string()
        })
    })
}

/// What policy name `name` stands for, as JSON: `name`, `base`, `form`,
/// `assists`, `predictor`, `stage`, `family`, `needs_future`
/// (`PolicyError` for an unknown policy, assist or predictor).
#[pyfunction]
fn describe_policy(name: &str) -> PyResult<String> {
    shielded(|| {
        let d = policy::describe_name(name).map_err(to_py)?;
        Ok(serde_json::to_string(&d).expect("serialises"))
    })
}

/// Every field of the device configuration (name, type, optional, unit,
/// choices, doc, default), as JSON.
#[pyfunction]
fn device_fields_json() -> PyResult<String> {
    shielded(|| Ok(wafer_core::device::fields_json().to_string()))
}

/// Every field a run takes (`wafer.Run`, `replay`'s keywords: name,
/// type, unit, choices, default, doc, CLI flag, group), as JSON.
#[pyfunction]
fn run_fields_json() -> PyResult<String> {
    shielded(|| Ok(wafer_core::run::spec::fields_json().to_string()))
}

/// The whole run configuration for the run `spec_json` gives (a
/// `RunSpec`: any of `run_fields_json`'s fields; absent = not given), every
/// rule applied in the engine, as JSON; `ConfigError` naming the field.
#[pyfunction]
fn settle_run(spec_json: &str) -> PyResult<String> {
    shielded(|| {
        let spec: wafer_core::run::RunSpec = from_json("run", spec_json)?;
        let cfg = spec.settle().map_err(to_py)?;
        Ok(serde_json::to_string(&cfg).expect("a run config serialises"))
    })
}

/// Default run configuration, as JSON.
#[pyfunction]
fn default_config_json() -> PyResult<String> {
    shielded(|| Ok(serde_json::to_string(&RunConfig::default()).expect("config serialises")))
}

/// The run configuration `config_json` as the engine reads it, as JSON
/// (every field, defaults filled in): the form `checkpoint_config` returns,
/// so the two compare field by field. `ConfigError` if it does not parse.
#[pyfunction]
fn canonical_config_json(config_json: &str) -> PyResult<String> {
    shielded(|| {
        let cfg = run_config(config_json)?;
        Ok(serde_json::to_string(&cfg).expect("a run config serialises"))
    })
}

/// The run configuration stored in checkpoint `path`, as JSON (as
/// `canonical_config_json` gives it), once the file's header, checksum and
/// wafer version check out; `CheckpointError` naming the file otherwise.
/// The engine's state is not decoded: a sweep asks this before adopting a
/// checkpoint it finds.
#[pyfunction]
fn checkpoint_config(py: Python<'_>, path: &str) -> PyResult<String> {
    shielded(|| {
        let cfg = py
            .detach(|| wafer_core::run::checkpoint::stored_config(std::path::Path::new(path)))
            .map_err(to_py)?;
        Ok(serde_json::to_string(&cfg).expect("a run config serialises"))
    })
}

/// Panic with `message` under the boundary's shield: `InternalError`,
/// never PyO3's `PanicException` (for the tests of the panic boundary and
/// of a sweep that meets one; not part of the API).
#[pyfunction]
#[pyo3(name = "_panic")]
fn test_panic(message: &str) -> PyResult<()> {
    shielded(|| panic!("{message}"))
}

/// Remove the temporary files that killed writers of checkpoint `path`
/// left beside it (`.NAME.tmp-PID` of a process that is gone); returns
/// their paths. A run checkpointing to `path` calls it when it starts.
#[pyfunction]
fn remove_stale_checkpoint_temps(path: &str) -> PyResult<Vec<String>> {
    shielded(|| {
        Ok(
            wafer_core::run::checkpoint::remove_stale_temps(std::path::Path::new(path))
                .into_iter()
                .map(|p| p.display().to_string())
                .collect(),
        )
    })
}

/// The whole device the fields `given_json` gives (a partial device:
/// absent = its default; `capacity` / `segment_size` in bytes or a size
/// string), settled and validated as a run settles its device, as JSON;
/// `ConfigError` naming the field.
#[pyfunction]
fn settle_device(given_json: &str) -> PyResult<String> {
    shielded(|| {
        let given: serde_json::Map<String, serde_json::Value> = from_json("device", given_json)?;
        let d = wafer_core::run::spec::device_of(&given, None).map_err(to_py)?;
        d.geometry().map_err(to_py)?;
        Ok(serde_json::to_string(&d).expect("a device serialises"))
    })
}

/// Validate a device configuration (JSON); returns its geometry as JSON or
/// raises `ConfigError` naming the field.
#[pyfunction]
fn check_device(device_json: &str) -> PyResult<String> {
    shielded(|| {
        let d: wafer_core::DeviceConfig = from_json("device", device_json)?;
        let g = d.geometry().map_err(to_py)?;
        Ok(serde_json::to_string(&g).expect("geometry serialises"))
    })
}

/// The first `requests` requests of workload `spec` on `logical_blocks`
/// blocks, as columns `(time_ns, lba, blocks, op, tenant)` with op 0 read,
/// 1 write, 2 trim (for `wafer traces sample`).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn workload_requests(
    py: Python<'_>,
    spec: &str,
    logical_blocks: u64,
    block_size: u32,
    requests: usize,
    seed: u64,
) -> PyResult<(Vec<u64>, Vec<u64>, Vec<u32>, Vec<u8>, Vec<u32>)> {
    shielded(|| {
        let mut w = workload::parse(spec, logical_blocks, block_size, seed).map_err(to_py)?;
        Ok(py.detach(|| {
            let mut out = (
                Vec::with_capacity(requests),
                Vec::with_capacity(requests),
                Vec::with_capacity(requests),
                Vec::with_capacity(requests),
                Vec::with_capacity(requests),
            );
            for _ in 0..requests {
                let r = w.next_request();
                out.0.push(r.time_ns);
                out.1.push(r.lba);
                out.2.push(r.blocks);
                out.3.push(r.op.code());
                out.4.push(r.tenant);
            }
            out
        }))
    })
}

/// The selected requests of a trace as columns `(time_ns, offset_bytes,
/// size_bytes, op, device)` with op 0 read, 1 write, 2 trim; at most
/// `max_requests` of them (workload clustering, `wafer.tune`).
#[pyfunction]
#[pyo3(signature = (path, format=None, max_requests=None))]
#[allow(clippy::type_complexity)]
fn trace_columns(
    py: Python<'_>,
    path: &str,
    format: Option<&str>,
    max_requests: Option<u64>,
) -> PyResult<(Vec<u64>, Vec<u64>, Vec<u64>, Vec<u8>, Vec<u64>)> {
    shielded(|| {
        py.detach(|| {
            let sel = Selection {
                max_requests,
                ..Default::default()
            };
            let (mut s, _) = trace::open_selected(path, format, &sel)?;
            let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
            while let Some(r) = s.next_record()? {
                out.0.push(r.time_ns);
                out.1.push(r.offset);
                out.2.push(r.size);
                out.3.push(r.op.code());
                out.4.push(r.device);
            }
            Ok(out)
        })
        .map_err(to_py)
    })
}

/// Generate `requests` requests of workload `spec` and return
/// (blocks generated, seconds): the generator's own speed.
#[pyfunction]
fn bench_workload(
    py: Python<'_>,
    spec: &str,
    logical_blocks: u64,
    requests: u64,
    seed: u64,
) -> PyResult<(u64, f64)> {
    shielded(|| {
        let mut w = workload::parse(spec, logical_blocks, 4096, seed).map_err(to_py)?;
        Ok(py.detach(|| {
            let t = std::time::Instant::now();
            let mut blocks = 0u64;
            for _ in 0..requests {
                blocks += std::hint::black_box(w.next_request()).blocks as u64;
            }
            (blocks, t.elapsed().as_secs_f64())
        }))
    })
}

fn selection(json: &str) -> PyResult<Selection> {
    from_json("trace selection", json)
}

/// A timing preset's over-provisioning (a share of its physical pages,
/// `ssd_json` as `timing_config_json` gives it) as the device's `op`,
/// (physical - logical) / logical.
#[pyfunction]
fn preset_op(ssd_json: &str) -> PyResult<f64> {
    shielded(|| {
        let ssd: wafer_core::timing::SsdConfig = from_json("timing", ssd_json)?;
        Ok(wafer_core::run::spec::preset_op(&ssd))
    })
}

/// Refuse, naming the field, a run configuration (JSON) that a
/// multi-volume run could not give every volume (before a file is split).
#[pyfunction]
fn check_multi_run(config_json: &str) -> PyResult<()> {
    shielded(|| {
        let cfg = run_config(config_json)?;
        wafer_core::run::multi::check_run(&cfg).map_err(to_py)
    })
}

/// The workload grammar, as `--help` shows it.
#[pyfunction]
fn workload_grammar() -> String {
    wafer_core::workload::GRAMMAR.to_string()
}

/// Registered trace formats, as JSON.
#[pyfunction]
fn trace_formats_json() -> PyResult<String> {
    shielded(|| {
        Ok({
            let mut v: Vec<_> = trace::FORMATS
                .iter()
                .map(|f| serde_json::json!({"name": f.name, "description": f.description}))
                .collect();
            v.push(serde_json::json!({"name": trace::NATIVE, "description": "wafer's native columnar format (Arrow IPC file)"}));
            serde_json::Value::Array(v).to_string()
        })
    })
}

/// The format of `path` as detected from its content.
#[pyfunction]
fn detect_format(py: Python<'_>, path: &str) -> PyResult<String> {
    shielded(|| py.detach(|| trace::detect(path)).map_err(to_py))
}

/// wafer's cache folder for `dir` (given, else `$WAFER_CACHE_DIR`,
/// `$XDG_CACHE_HOME/wafer`, `~/.cache/wafer`: the engine's own rule), or
/// `None` without any of them.
#[pyfunction]
#[pyo3(signature = (dir=None))]
fn cache_dir(dir: Option<&str>) -> Option<String> {
    wafer_core::future::cache_dir(dir).map(|p| p.display().to_string())
}

/// Bytes this process has read from trace files so far (as stored): a
/// progress line compares it with the file's size while a long read runs on
/// another thread.
#[pyfunction]
fn trace_bytes_read() -> u64 {
    trace::bytes_read()
}

/// Statistics of a trace (see `wafer.TraceStats`), as JSON.
#[pyfunction]
#[pyo3(signature = (path, format, selection_json, block_size, capacity_blocks=None))]
fn inspect_json(
    py: Python<'_>,
    path: &str,
    format: Option<&str>,
    selection_json: &str,
    block_size: u32,
    capacity_blocks: Option<u64>,
) -> PyResult<String> {
    shielded(|| {
        let sel = selection(selection_json)?;
        if !block_size.is_power_of_two() || block_size < 512 {
            return Err(ConfigError::new_err(format!(
                "block_size {block_size}: must be a power of two >= 512"
            )));
        }
        py.detach(|| {
            let (mut src, fmt) = trace::open_selected(path, format, &sel)?;
            stats::compute(&mut src, &fmt, block_size, capacity_blocks)
        })
        .map(|s| serde_json::to_string(&s).expect("stats serialise"))
        .map_err(to_py)
    })
}

/// Convert a trace to the native format; returns the read counts as JSON.
#[pyfunction]
fn convert_json(
    py: Python<'_>,
    src: &str,
    dst: &str,
    format: Option<&str>,
    selection_json: &str,
) -> PyResult<String> {
    shielded(|| {
        let sel = selection(selection_json)?;
        py.detach(|| {
            let (mut s, fmt) = trace::open_selected(src, format, &sel)?;
            native::write(&mut s, dst, src, &fmt)
        })
        .map(|s| serde_json::to_string(&s).expect("stats serialise"))
        .map_err(to_py)
    })
}

/// Split a multi-volume trace into one native trace per volume in
/// `out_dir`; `volumes` is `all`, `top:N` or device ids joined by `+` or
/// spaces ([`parse_volumes`]).
/// Returns the volumes written (device, path, counts, footprint) as JSON.
#[pyfunction]
fn split_json(
    py: Python<'_>,
    src: &str,
    out_dir: &str,
    format: Option<&str>,
    selection_json: &str,
    volumes: &str,
    block_size: u32,
) -> PyResult<String> {
    shielded(|| {
        let sel = selection(selection_json)?;
        let which = parse_volumes(volumes)?;
        py.detach(|| trace::split::split_file(src, format, &sel, out_dir, &which, block_size))
            .map(|v| serde_json::to_string(&v).expect("volumes serialise"))
            .map_err(to_py)
    })
}

/// `--volumes`: `all`, `top:N`, or device ids (`N` or `MAJ,MIN`) joined by
/// spaces or `+`.
fn parse_volumes(text: &str) -> PyResult<trace::split::Volumes> {
    use trace::split::Volumes;
    let t = text.trim();
    let bad =
        |why: String| ConfigError::new_err(format!("invalid trace selection: volumes: {why}"));
    if t == "all" {
        return Ok(Volumes::All);
    }
    if let Some(n) = t.strip_prefix("top:") {
        return match n.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(Volumes::Top(n)),
            _ => Err(bad(format!("'{t}': top:N takes a count N >= 1"))),
        };
    }
    let mut ids = Vec::new();
    for part in t
        .split(|c: char| c == '+' || c.is_whitespace())
        .filter(|p| !p.is_empty())
    {
        let id = match part.split_once(',') {
            Some((a, b)) => match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(a), Ok(b)) if a < 1 << 32 && b < 1 << 32 => (a << 32) | b,
                _ => return Err(bad(format!("'{part}' is not a device id (N or MAJ,MIN)"))),
            },
            None => part
                .parse::<u64>()
                .map_err(|_| bad(format!("'{part}' is not a device id (N or MAJ,MIN)")))?,
        };
        ids.push(id);
    }
    if ids.is_empty() {
        return Err(bad("empty; give all, top:N or device ids".into()));
    }
    Ok(Volumes::Ids(ids))
}

/// Write a trace and a continuation that keeps its lifetimes to `dst` (a
/// native trace) up to `drive_writes` in all; returns what it wrote as JSON.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // reason: the Python signature's arguments, one each
fn extend_json(
    py: Python<'_>,
    src: &str,
    dst: &str,
    format: Option<&str>,
    selection_json: &str,
    block_size: u32,
    drive_writes: f64,
    seed: u64,
) -> PyResult<String> {
    shielded(|| {
        let sel = selection(selection_json)?;
        py.detach(|| {
            trace::extend::write_extended(src, format, &sel, block_size, drive_writes, seed, dst)
        })
        .map(|w| serde_json::to_string(&w).expect("report serialises"))
        .map_err(to_py)
    })
}

/// Read every selected request of a trace and return (requests, seconds):
/// the reader's own speed.
#[pyfunction]
fn bench_trace(py: Python<'_>, path: &str, format: Option<&str>) -> PyResult<(u64, f64)> {
    shielded(|| {
        py.detach(|| {
            let t = std::time::Instant::now();
            let (mut s, _) = trace::open_selected(path, format, &Selection::default())?;
            let mut n = 0u64;
            while let Some(r) = s.next_record()? {
                std::hint::black_box(r);
                n += 1;
            }
            Ok((n, t.elapsed().as_secs_f64()))
        })
        .map_err(to_py)
    })
}

/// Annotate the request stream of a run configuration with each block's
/// death time (cached next to a trace); returns how, as JSON.
#[pyfunction]
fn annotate_json(py: Python<'_>, config_json: &str) -> PyResult<String> {
    shielded(|| {
        let cfg = run_config(config_json)?;
        wafer_core::interrupt::clear();
        let (_, info) = py.detach(|| cfg.annotate()).map_err(to_py)?;
        Ok(serde_json::to_string(&info).expect("serialises"))
    })
}

/// NoDaP's offline configuration search on a run configuration's stream;
/// `progress(trial_json)` is called after every replay. Returns
/// `{"search": ..., "annotation": ...}` as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, min_gain=None, max_groups=None, progress=None))]
fn oracle_search_json(
    py: Python<'_>,
    config_json: &str,
    min_gain: Option<f64>,
    max_groups: Option<usize>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    shielded(|| {
        let cfg = run_config(config_json)?;
        // Unset: NoDaP's own defaults.
        let d = search::Options::default();
        let opts = search::Options {
            min_gain: min_gain.unwrap_or(d.min_gain),
            max_groups: max_groups.unwrap_or(d.max_groups),
        };
        wafer_core::interrupt::clear();
        py.detach(|| {
            let mut report = |t: &search::Trial| {
                if progress.is_some() {
                    call_progress(&progress, &serde_json::to_string(t).expect("serialises"));
                }
            };
            let (r, info) = wafer_core::run::oracle::search(&cfg, &opts, &mut report)?;
            Ok(serde_json::json!({"search": r, "annotation": info}).to_string())
        })
        .map_err(to_py)
    })
}

/// Weighted K-means as the `fios` policy runs it (k-means++ seeded by
/// `seed`, or the given initial centres; Lloyd to no change or `max_iter`):
/// `{"centers", "labels", "init", "iterations", "inertia", "converged"}` as
/// JSON. For the scikit-learn parity test.
#[pyfunction]
#[pyo3(signature = (points, weights, k, seed=1, max_iter=300, init=None))]
fn kmeans_json(
    points: Vec<Vec<f64>>,
    weights: Vec<f64>,
    k: usize,
    seed: u64,
    max_iter: u32,
    init: Option<Vec<Vec<f64>>>,
) -> PyResult<String> {
    shielded(|| {
        let d = points.first().map_or(1, |p| p.len());
        let bad = |why: String| Err(ConfigError::new_err(format!("kmeans: {why}")));
        if k == 0 {
            return bad("k = 0; must be at least 1".into());
        }
        if points.is_empty() || d == 0 {
            return bad("no points (or points of no dimension) to cluster".into());
        }
        if let Some(i) = points.iter().position(|p| p.len() != d) {
            return bad(format!(
                "point {i} has {} coordinates, point 0 has {d}",
                points[i].len()
            ));
        }
        if weights.len() != points.len() {
            return bad(format!(
                "{} weights for {} points",
                weights.len(),
                points.len()
            ));
        }
        if let Some(i) = points.iter().position(|p| p.iter().any(|x| !x.is_finite())) {
            return bad(format!("point {i} is not finite ({:?})", points[i]));
        }
        if let Some(i) = weights.iter().position(|w| !w.is_finite() || *w < 0.0) {
            return bad(format!(
                "weight {i} is {}; weights are finite and >= 0",
                weights[i]
            ));
        }
        if let Some(c) = &init {
            if c.len() != k
                || c.iter()
                    .any(|p| p.len() != d || p.iter().any(|x| !x.is_finite()))
            {
                return bad(format!(
                    "init: {k} finite centres of {d} coordinates expected"
                ));
            }
        }
        let flat: Vec<f64> = points.into_iter().flatten().collect();
        let how = match init {
            Some(c) => Init::Given(c.into_iter().flatten().collect()),
            None => Init::PlusPlus(seed),
        };
        let c = kmeans(&flat, &weights, d, k, &how, max_iter);
        Ok(serde_json::json!({
            "centers": c.centers.chunks(d).collect::<Vec<_>>(),
            "init": c.init.chunks(d).collect::<Vec<_>>(),
            "labels": c.labels, "iterations": c.iterations, "inertia": c.inertia,
            "converged": c.converged,
        })
        .to_string())
    })
}

/// Every preset with its full field set, as JSON: `device` (name,
/// description, the fields it sets, the whole config, victim) and `timing`
/// (name, description, the whole SSD).
#[pyfunction]
fn presets_json() -> PyResult<String> {
    shielded(|| Ok(wafer_core::preset::all_json().map_err(to_py)?.to_string()))
}

fn run_config(json: &str) -> PyResult<RunConfig> {
    from_json("run", json)
}

/// `json` as a `what` configuration; an error names the field it is about
/// (`invalid device configuration: logical_blocks: invalid value: integer
/// \`-5\`, expected u64`), never the JSON's line and column, which a user of
/// the CLI or the Python API never saw (the CLI adds the flag's name).
fn from_json<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> PyResult<T> {
    let mut de = serde_json::Deserializer::from_str(json);
    let plain = |e: serde_json::Error| {
        let e = e.to_string();
        match e.rsplit_once(" at line ") {
            Some((w, _)) => w.to_string(),
            None => e,
        }
    };
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let why = plain(e.into_inner());
        ConfigError::new_err(if path == "." || path.is_empty() {
            format!("invalid {what} configuration: {why}")
        } else {
            format!("invalid {what} configuration: {path}: {why}")
        })
    })?;
    de.end()
        .map_err(|e| ConfigError::new_err(format!("invalid {what} configuration: {}", plain(e))))?;
    Ok(v)
}

/// The SSD of timing preset (or TOML file, or MQSim `.xml` file) `spec`, as JSON; `ConfigError`
/// naming the key when it is invalid.
#[pyfunction]
fn timing_config_json(spec: &str) -> PyResult<String> {
    shielded(|| {
        let c = wafer_core::timing::SsdConfig::load(spec).map_err(to_py)?;
        Ok(serde_json::to_string(&c).expect("serialises"))
    })
}

/// The TOML text of timing preset `name` (to copy and edit).
#[pyfunction]
fn timing_preset_toml(name: &str) -> PyResult<String> {
    shielded(|| {
        wafer_core::timing::config::PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| text.to_string())
            .ok_or_else(|| to_py(wafer_core::timing::SsdConfig::load(name).unwrap_err()))
    })
}

/// The timing preset (TOML text) equivalent to MQSim device configuration
/// `path` (an `ssdconfig.xml`): a header naming the file and what it asks
/// for that wafer does not do, then every field (`wafer presets import`).
#[pyfunction]
fn timing_import_toml(path: &str) -> PyResult<String> {
    shielded(|| {
        use wafer_core::timing::config::mqsim_xml;
        let c = mqsim_xml::load(std::path::Path::new(path)).map_err(to_py)?;
        mqsim_xml::to_preset_toml(&c, path).map_err(to_py)
    })
}

/// Default timing-run settings (arrival, queue depth, ...), as JSON.
#[pyfunction]
fn timing_defaults_json() -> PyResult<String> {
    shielded(|| {
        Ok(serde_json::to_string(&wafer_core::timing::TimingRun::default()).expect("serialises"))
    })
}

/// Nanoseconds per call of each inference kernel, as `[(name, ns), ...]`.
#[pyfunction]
#[pyo3(signature = (scale=1.0))]
fn bench_kernels(py: Python<'_>, scale: f64) -> PyResult<Vec<(String, f64)>> {
    shielded(|| Ok(py.detach(|| wafer_core::model::bench::measure(scale))))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    install_panic_hook();
    #[cfg(feature = "learn")]
    wafer_learn::install();
    // Ctrl-C reaches the long Rust calls (the interpreter's own handler,
    // chained, still raises KeyboardInterrupt once they return); only where
    // Ctrl-C raises KeyboardInterrupt (not in a worker that ignores it).
    let signal = py.import("signal")?;
    let current = signal.call_method1("getsignal", (signal_hook::consts::SIGINT,))?;
    if current.is(&signal.getattr("default_int_handler")?) {
        let _ =
            signal_hook::flag::register(signal_hook::consts::SIGINT, wafer_core::interrupt::flag());
    }
    m.add_class::<Simulation>()?;
    m.add_class::<MultiSimulation>()?;
    m.add_function(wrap_pyfunction!(registry_json, m)?)?;
    m.add_function(wrap_pyfunction!(describe_policy, m)?)?;
    m.add_function(wrap_pyfunction!(device_fields_json, m)?)?;
    m.add_function(wrap_pyfunction!(default_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(run_fields_json, m)?)?;
    m.add_function(wrap_pyfunction!(settle_run, m)?)?;
    m.add_function(wrap_pyfunction!(check_multi_run, m)?)?;
    m.add_function(wrap_pyfunction!(preset_op, m)?)?;
    m.add_function(wrap_pyfunction!(workload_grammar, m)?)?;
    m.add_function(wrap_pyfunction!(settle_device, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(check_device, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_config, m)?)?;
    m.add_function(wrap_pyfunction!(remove_stale_checkpoint_temps, m)?)?;
    m.add_function(wrap_pyfunction!(test_panic, m)?)?;
    m.add_function(wrap_pyfunction!(bench_workload, m)?)?;
    m.add_function(wrap_pyfunction!(workload_requests, m)?)?;
    m.add_function(wrap_pyfunction!(trace_columns, m)?)?;
    m.add_function(wrap_pyfunction!(trace_formats_json, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(inspect_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace_bytes_read, m)?)?;
    m.add_function(wrap_pyfunction!(cache_dir, m)?)?;
    m.add_function(wrap_pyfunction!(split_json, m)?)?;
    m.add_function(wrap_pyfunction!(convert_json, m)?)?;
    m.add_function(wrap_pyfunction!(extend_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_trace, m)?)?;
    m.add_function(wrap_pyfunction!(annotate_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(oracle_search_json, m)?)?;
    m.add_function(wrap_pyfunction!(kmeans_json, m)?)?;
    m.add_function(wrap_pyfunction!(presets_json, m)?)?;
    m.add_function(wrap_pyfunction!(timing_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(timing_preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(timing_import_toml, m)?)?;
    m.add_function(wrap_pyfunction!(timing_defaults_json, m)?)?;
    m.add("WaferError", py.get_type::<WaferError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PolicyError", py.get_type::<PolicyError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("CheckpointError", py.get_type::<CheckpointError>())?;
    m.add("ResourceError", py.get_type::<ResourceError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
