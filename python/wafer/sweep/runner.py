"""Running a study's jobs: one job in a worker (:func:`run_job`), the
backends that ship jobs to workers (a local process pool, a Ray cluster),
and the loop that claims jobs in the store, runs them and records them.

Only the coordinating process writes the store: workers get a job's spec
and return its outcome (JSON-ready), so a worker can be anywhere Ray runs.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .. import _core
from ..progress import Progress
from .study import Job, replay_args

#: Seconds between heartbeats of the running jobs in the store.
HEARTBEAT_SECONDS = 30.0


#: Jobs of at least this many user writes [blocks] checkpoint when the sweep
#: has a checkpoint folder: 2^25 blocks (128 GiB of 4-KiB writes) replay for
#: tens of seconds to minutes, shorter ones are cheaper to run again.
CHECKPOINT_MIN_WRITES = 1 << 25


@dataclass(frozen=True)
class JobContext:
    """What a worker needs besides the job itself.

    ``checkpoint_dir``: a folder (on storage the workers share) where jobs
    of at least ``checkpoint_min_writes`` user writes keep a checkpoint,
    ``<job id>.ckpt``, every 5 minutes (:data:`wafer.api.CHECKPOINT_SECONDS`); a job
    that finds its file (its worker was killed) resumes from it, and the file
    is removed once the job is recorded. ``None``: no checkpoints."""

    checkpoint_dir: str | None = None
    checkpoint_min_writes: int = CHECKPOINT_MIN_WRITES


def _expected_writes(spec: dict[str, Any]) -> int | None:
    """User writes a job will do, when the spec says (``None`` for a whole
    trace: its length is known only once read)."""
    if spec.get("writes"):
        return int(spec["writes"])
    if spec.get("drive_writes") and (spec.get("device") or {}).get("logical_blocks"):
        return int(spec["drive_writes"] * spec["device"]["logical_blocks"])
    return None


def checkpoint_path(job_id: str, spec: dict[str, Any], ctx: JobContext | None) -> str | None:
    """Where job ``job_id`` keeps its checkpoint, or ``None`` if it does not
    (no folder, a short job). A whole trace counts as long when its file is
    256 MiB or more."""
    if ctx is None or ctx.checkpoint_dir is None:
        return None
    n = _expected_writes(spec)
    if n is None:
        t = spec.get("trace") or {}
        try:
            long = os.path.getsize(t["path"]) >= 256 << 20
        except (KeyError, OSError):
            long = False
    else:
        long = n >= ctx.checkpoint_min_writes
    return os.path.join(ctx.checkpoint_dir, f"{job_id}.ckpt") if long else None


#: Configuration fields that do not define a run (where caches go, the
#: memory ceiling): a checkpoint may differ in them and still be the job's.
_NOT_THE_RUN = ("cache_dir", "memory_limit")

#: Parameters NoDaP's search adds to a job's own (the configuration it found).
_SEARCH_PARAMS = ("birs", "sizes", "search")


def foreign_checkpoint(path: str, spec: dict[str, Any]) -> str | None:
    """Why the checkpoint at ``path`` must not be adopted by the job of
    ``spec``, or ``None`` when it is the job's own: a file that is corrupt,
    of another wafer version, or whose stored configuration is not the
    job's (another study's, a copied file) would resume a run that is not
    this job, so its result would be recorded under the wrong job."""
    from ..api import _needs_nodap_search, run_config

    try:
        stored = json.loads(_core.checkpoint_config(path))
        policy, workload, kw = replay_args(spec)
        want = json.loads(_core.canonical_config_json(json.dumps(run_config(policy, workload, **kw))))
    except _core.WaferError as e:
        return str(e)
    if _needs_nodap_search(policy, kw.get("params")):
        # The run's parameters include the configuration its search found.
        for cfg in (stored, want):
            cfg["params"] = {k: v for k, v in (cfg.get("params") or {}).items() if k not in _SEARCH_PARAMS}
    differ = sorted(k for k in set(stored) | set(want)
                    if k not in _NOT_THE_RUN and stored.get(k) != want.get(k))
    if differ:
        return f"checkpoint {path}: not this job's (its {', '.join(differ)} differ)"
    return None


def run_job(job_id: str, spec: dict[str, Any], ctx: JobContext | None = None) -> dict[str, Any]:
    """Run one job here and return its outcome: ``id``, ``status``
    (``done``/``failed``), ``error``, ``result`` (the result as a dict, or a
    failed job's partial result, or None), ``seconds`` (wall time), ``host``,
    ``pid``. Never raises for a failing replay: the error is the outcome
    (also a bug's, :class:`wafer.InternalError`, so one job's panic never
    ends the sweep).

    A checkpoint found at the job's path (its worker was killed) is
    adopted only if :func:`foreign_checkpoint` finds nothing against it;
    otherwise the job starts over (overwriting it), says why on stderr and
    keeps the reason in the outcome's ``checkpoint_error``."""
    from .. import _core
    from ..api import replay, resume

    start = time.monotonic()
    out: dict[str, Any] = {"id": job_id, "status": "done", "error": None, "result": None,
                           "host": socket.gethostname(), "pid": os.getpid()}
    ck = checkpoint_path(job_id, spec, ctx)
    try:
        policy, workload, kw = replay_args(spec)
        r = None
        if ck is not None and os.path.exists(ck):
            why = foreign_checkpoint(ck, spec)
            if why is None:
                try:
                    r = resume(ck)
                    out["resumed"] = True
                except _core.CheckpointError as e:
                    # Its trace changed since, say: start the job over.
                    why = str(e)
            if why is not None:
                out["checkpoint_error"] = why
                sys.stderr.write(f"wafer sweep: job {job_id}: {why}; starting the job over\n")
        if r is None:
            if ck is not None:
                os.makedirs(os.path.dirname(ck), exist_ok=True)
            r = replay(policy, workload, **kw, checkpoint=ck)
        out["result"] = r.to_dict()
        if ck is not None and os.path.exists(ck):
            os.remove(ck)
    except _core.WaferError as e:
        partial = getattr(e, "partial", None)
        out.update(status="failed", error=str(e), result=partial.to_dict() if partial is not None else None)
    except _core.InternalError as e:  # a Rust panic, caught at the binding: this job fails, the sweep goes on
        out.update(status="failed", error=f"InternalError: {e}")
    except Exception as e:  # a bug must not end the sweep: the job records it
        out.update(status="failed", error=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=5)}")
    out["seconds"] = time.monotonic() - start
    return out


@contextmanager
def _spawnable_main():
    """Hide a ``__main__.__file__`` that names no file (``python -``, some
    embedders) while workers start: a spawned worker would try to run it, and
    workers need nothing from ``__main__`` (a job is wafer's own function)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or getattr(main, "__spec__", None) is not None or os.path.isfile(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _die_with_parent(parent: int) -> None:
    """A pool worker's initializer: end this worker when the sweep that
    started it (process ``parent``) dies, even by SIGKILL, so no worker is
    left replaying a job nobody will record. On Linux the kernel sends it
    SIGKILL (``PR_SET_PDEATHSIG``); elsewhere a thread watches the parent.
    The multiprocessing resource tracker then ends too: it stops when the
    last process holding its pipe (the sweep, its workers) is gone."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) != 0:  # PR_SET_PDEATHSIG
                _watch_parent(parent)
        except (OSError, AttributeError):
            _watch_parent(parent)
    else:
        _watch_parent(parent)
    if os.getppid() != parent:  # the sweep died before the line above
        os._exit(1)


def _watch_parent(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="wafer-parent-watch", daemon=True).start()


class LocalBackend:
    """A pool of ``workers`` processes on this machine (started with spawn,
    so it is safe with threads and the same on every platform); the workers
    end when the sweep dies (:func:`_die_with_parent`)."""

    name = "local"

    def __init__(self, workers: int | None = None):
        cores = os.cpu_count() or 1
        if workers and workers > cores:
            # More CPU-bound simulations than cores only share the cores and
            # multiply the memory in use: a run can use at most one per core.
            print(f"wafer: note: --jobs {workers} runs as {cores} (this machine's cores)", file=sys.stderr)
        self.workers = max(1, min(workers or cores, cores))
        self._pool: cf.ProcessPoolExecutor | None = None

    def _ensure(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                initializer=_die_with_parent, initargs=(os.getpid(),))
        return self._pool

    def submit(self, job: Job, ctx: JobContext) -> Any:
        with _spawnable_main():  # workers start during submit
            return self._ensure().submit(run_job, job.id, job.spec, ctx)

    def wait(self, handles: Iterable[Any], timeout: float) -> list[tuple[Any, dict[str, Any] | None, str | None]]:
        """Finished handles with their outcome, or None and the reason the worker died."""
        done, _ = cf.wait(list(handles), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        out = []
        broken = False
        for h in done:
            try:
                out.append((h, h.result(), None))
            except BrokenProcessPool as e:
                broken = True
                out.append((h, None, f"a worker process died (killed, or out of memory?) while running this job "
                                     f"or one beside it: {e}"))
        if broken:  # the pool is unusable: start a new one for what is left
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        return out

    def close(self, cancel: list[Any] | None = None) -> None:
        """Stop the pool; with handles to ``cancel`` (an interrupted sweep) kill the workers."""
        if self._pool is None:
            return
        force = bool(cancel)
        if force:
            for p in list(getattr(self._pool, "_processes", {}).values()):
                p.kill()
        self._pool.shutdown(wait=not force, cancel_futures=True)
        self._pool = None


class RayBackend:
    """Jobs as Ray tasks (one CPU each). Connects to ``address``
    (``ray.init(address=...)``; ``"auto"`` finds a running cluster), or to
    the cluster this process is already connected to, or starts a local one
    with ``workers`` CPUs. Workers need wafer installed (same version) and
    a study's traces at the same path (a shared file system); results come
    back to this process, which alone writes the store."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None):
        try:
            import ray
        except ImportError:
            from .. import _core

            raise _core.ConfigError("the ray backend needs Ray: pip install 'wafer[ray]' (or pip install ray)") \
                from None
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            kw: dict[str, Any] = {"address": address, "include_dashboard": False, "log_to_driver": False}
            if address is None:
                kw["num_cpus"] = workers or os.cpu_count()
            ray.init(**kw)
            self.started = True
        self.workers = int(ray.cluster_resources().get("CPU", 1))
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_job)

    def submit(self, job: Job, ctx: JobContext) -> Any:
        return self._task.remote(job.id, job.spec, ctx)

    def wait(self, handles: Iterable[Any], timeout: float) -> list[tuple[Any, dict[str, Any] | None, str | None]]:
        handles = list(handles)
        done, _ = self.ray.wait(handles, num_returns=1, timeout=timeout)
        out = []
        for h in done:
            try:
                out.append((h, self.ray.get(h), None))
            except Exception as e:  # the task's worker died
                out.append((h, None, f"the Ray task failed: {type(e).__name__}: {e}"))
        return out

    def close(self, cancel: list[Any] | None = None) -> None:
        """Cancel these tasks (an interrupted sweep); disconnect if this backend started Ray."""
        for ref in cancel or ():
            self.ray.cancel(ref, force=True)
        if self.started:
            self.ray.shutdown()


def make_backend(backend: str, workers: int | None, address: str | None):
    """The backend by name: ``local`` or ``ray``."""
    if backend == "local":
        return LocalBackend(workers)
    if backend == "ray":
        return RayBackend(workers, address)
    from .. import _core

    raise _core.ConfigError(f"unknown backend '{backend}'; use local or ray")


@dataclass
class Tally:
    """What one sweep did: jobs ``ran`` here (``failed`` of them), ``skipped``
    because done (or failed earlier), ``busy`` in another live sweep."""

    total: int = 0
    ran: int = 0
    failed: int = 0
    skipped: int = 0
    busy: int = 0
    seconds: float = 0.0


def execute(jobs: list[Job], store, make_backend: Callable[[], Any], *, owner: str, study: str | None = None,
            retry_failed: bool = False, progress: bool = True, ctx: JobContext | None = None) -> Tally:
    """Run the jobs the store does not have yet on the backend that
    ``make_backend()`` gives (made only if there is something to run, closed
    at the end), recording each outcome as it arrives. At most twice as many
    jobs as workers are claimed at a time, so a second sweep on the same
    store shares the rest."""
    ctx = ctx or JobContext()
    tally = Tally(total=len(jobs))
    start = time.monotonic()
    known = store.statuses(j.id for j in jobs)
    keep = ("done",) if retry_failed else ("done", "failed")
    todo = deque(j for j in jobs if known.get(j.id) not in keep)
    tally.skipped = len(jobs) - len(todo)
    if not todo:
        return tally
    backend = make_backend()
    inflight: dict[Any, Job] = {}
    window = 2 * backend.workers
    retried: set[str] = set()
    deaths = returned = 0  # workers that died under a job / jobs a worker returned
    bar = Progress(len(todo), f"sweep {study or ''}".strip(), enabled=progress, unit="jobs", delay=1.0)
    last_beat = time.monotonic()
    try:
        while todo or inflight:
            while todo and len(inflight) < window:
                job = todo.popleft()
                state = store.claim(job, owner, study=study, retry_failed=retry_failed or job.id in retried)
                if state == "claimed":
                    inflight[backend.submit(job, ctx)] = job
                elif state == "busy":
                    tally.busy += 1
                else:
                    tally.skipped += 1
            if not inflight:
                break
            for handle, outcome, died in backend.wait(inflight, timeout=HEARTBEAT_SECONDS / 3):
                job = inflight.pop(handle)
                if outcome is None:
                    deaths += 1
                    if returned == 0 and deaths >= 2 * backend.workers + 2:
                        raise _core.SimulationError(
                            "sweep: the worker processes die before finishing any job. Run from a script? "
                            "Guard its sweep with `if __name__ == \"__main__\":` (workers start by importing "
                            f"it); else see the worker's error above. Last: {died}")
                    if job.id not in retried:  # a worker killed under it (out of memory?): once more
                        retried.add(job.id)
                        todo.appendleft(job)
                        continue
                    outcome = {"id": job.id, "status": "failed", "error": died, "result": None}
                else:
                    returned += 1
                store.finish(outcome, owner)
                tally.ran += 1
                tally.failed += outcome["status"] == "failed"
            bar.update(tally.ran + tally.busy)
            if time.monotonic() - last_beat > HEARTBEAT_SECONDS:
                store.heartbeat(owner, (j.id for j in inflight.values()))
                last_beat = time.monotonic()
    finally:
        bar.close()
        if inflight or todo:  # interrupted: what we claimed and did not finish is free again
            store.release(owner)
        backend.close(cancel=list(inflight))
    tally.seconds = time.monotonic() - start
    return tally
