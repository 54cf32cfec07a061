"""The results store: one SQLite file per study (stdlib ``sqlite3``).

Tables:

* ``jobs``: one row per job (replay). ``id`` is the hash of the job's full
  configuration and wafer's version (:func:`wafer.sweep.study.job_id`);
  ``config`` the job as JSON (labels, spec, engine configuration);
  ``status`` ``running`` / ``done`` / ``failed``; ``error`` why it failed;
  the study's dimensions (workload, policy, victim, device, op, seed,
  length) and the summary metrics as columns (waf, steady_waf, user_writes,
  gc_writes [blocks], user_accuracy, gc_accuracy, train_seconds [s],
  warnings, ...); ``result`` the full result JSON (also the partial results
  of a failed job); ``runs`` how many times the job was started; ``owner``
  and ``heartbeat`` (Unix seconds) of the sweep running it.
* ``windows``: the per-window time series, one row per (job, window), one
  column per statistic (columns are added as new statistics appear).
* ``studies``: each study's definition as JSON, by name.

Two sweeps may write one store at the same time: WAL journaling, a busy
timeout, and every change in a short ``BEGIN IMMEDIATE`` transaction. A
job claimed by a live sweep is left to it; one whose sweep died (its
process is gone, or its heartbeat is older than ``stale_after`` seconds)
is orphaned and run again.

A file that is not a store is refused before anything is written to it,
naming the file and why (:class:`wafer.ConfigError`): not an SQLite file
(empty, text, other bytes), a truncated or damaged one, or an SQLite
database of something else (wafer never adds its tables to it).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import _core
from .result import RunResult

SCHEMA_VERSION = 1

#: Where a job sits in its study (columns of ``jobs``).
DIMENSIONS = (("workload", "TEXT"), ("policy", "TEXT"), ("policy_name", "TEXT"), ("params", "TEXT"),
              ("victim", "TEXT"), ("device", "TEXT"), ("op", "REAL"), ("seed", "INTEGER"), ("length", "TEXT"))
#: What a job measured (columns of ``jobs``; see :meth:`wafer.RunResult.summary`).
METRICS = (("waf", "REAL"), ("steady_waf", "REAL"), ("extra_writes_per_user_write", "REAL"),
           ("user_writes", "INTEGER"), ("gc_writes", "INTEGER"), ("drive_writes", "REAL"),
           ("mean_victim_valid_ratio", "REAL"), ("elapsed_seconds", "REAL"), ("user_writes_per_second", "REAL"),
           ("user_accuracy", "REAL"), ("gc_accuracy", "REAL"), ("user_classes", "INTEGER"),
           ("gc_classes", "INTEGER"), ("train_seconds", "REAL"), ("warnings", "TEXT"),
           ("user_majority", "REAL"), ("user_balanced_accuracy", "REAL"), ("gc_majority", "REAL"),
           ("gc_balanced_accuracy", "REAL"))
_WINDOW_COLUMNS = ("drive_writes", "user_writes", "gc_writes", "waf", "cumulative_waf", "victims",
                   "victim_valid_ratio", "free_segments", "user_accuracy", "cumulative_user_accuracy",
                   "gc_accuracy", "cumulative_gc_accuracy")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_store(path: str | os.PathLike) -> bool:
    """Whether ``path`` is an SQLite file (a store), by its first bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def _check_file(path: Path, create: bool) -> None:
    """Refuse ``path`` before SQLite opens it: a missing or empty file unless
    ``create`` (SQLite would make it a new database), a file that is not
    SQLite. (SQLite itself finds a truncated file: its header counts more
    pages than the file and its WAL hold.)"""
    if not path.exists():
        if create:
            return
        raise _core.ConfigError(f"{path}: no such file")
    if path.is_dir():
        raise _core.ConfigError(f"{path}: a directory, not a wafer store")
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        raise _core.ConfigError(f"{path}: {e.strerror or e}") from None
    if size == 0:
        if create:
            return
        raise _core.ConfigError(f"{path}: an empty file (0 bytes), not a wafer store")
    if head != _SQLITE_MAGIC:
        raise _core.ConfigError(f"{path}: not a wafer store (not an SQLite file)")


def store_error(path: Any, e: sqlite3.Error) -> _core.ConfigError:
    """An SQLite error on the store at ``path`` as a one-line ConfigError naming the file."""
    damaged = "malformed" in str(e) or "not a database" in str(e)
    return _core.ConfigError(f"{path}: {'a damaged or truncated SQLite file: ' if damaged else ''}{e}")


@contextmanager
def sqlite_errors(path: Any):
    """Turn SQLite's errors inside the block (a store damaged past its first
    pages, a locked or full disk) into :class:`wafer.ConfigError` naming ``path``."""
    try:
        yield
    except sqlite3.Error as e:
        raise store_error(path, e) from None


def new_owner() -> str:
    """An owner tag for one sweep: ``host:pid:random``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _owner_alive(owner: str | None, heartbeat: float | None, now: float, stale_after: float) -> bool:
    """A claim holds while its heartbeat is fresh and, on this host, its process exists."""
    if not owner or heartbeat is None or now - heartbeat > stale_after:
        return False
    host, _, rest = owner.partition(":")
    if host == socket.gethostname():
        try:
            os.kill(int(rest.split(":")[0]), 0)
        except ProcessLookupError:
            return False
        except (PermissionError, ValueError):
            pass
    return True


class Store:
    """An open results store. ``Store(path)`` creates the file if needed
    (``create=False``: the file must be a store already); ``Store(None)``
    keeps everything in memory (one process only). A file that is not a
    store raises :class:`wafer.ConfigError` naming it and why."""

    def __init__(self, path: str | os.PathLike | None = None, *, timeout: float = 60.0, create: bool = True):
        self.path = None if path is None else Path(path)
        if self.path is not None:
            _check_file(self.path, create)
        try:
            self.db = sqlite3.connect(":memory:" if path is None else str(path), timeout=timeout,
                                      isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise store_error(self.path, e) from None
        try:
            self._open(timeout, create)
        except BaseException as e:
            self.db.close()
            if isinstance(e, sqlite3.Error):
                raise store_error(self.path, e) from None
            raise

    def _open(self, timeout: float, create: bool) -> None:
        self.db.row_factory = sqlite3.Row
        self.db.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and not self._is_wafers(tables):
            raise _core.ConfigError(f"{self.path}: not a wafer store: an SQLite database of something else "
                                    f"(tables {', '.join(sorted(tables)[:8])}); wafer leaves it alone")
        if not tables and not create:
            raise _core.ConfigError(f"{self.path}: not a wafer store: an SQLite database without tables")
        if tables:
            # Damage past the pages read so far (a table's pages) shows in the
            # first query that reads it, or never: look at every page now
            # (about a second per GB).
            problem = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]
            if problem != "ok":
                problem = " ".join(problem.replace("*** in database main ***", "").split())
                raise _core.ConfigError(f"{self.path}: a damaged SQLite file: {problem}")
        if self.path is not None:
            # Switching a new file to WAL needs it alone, and SQLite answers
            # "locked" at once (no busy wait) while another sweep creates the
            # same store: retry until the timeout.
            deadline = time.monotonic() + timeout
            while True:
                try:
                    self.db.execute("PRAGMA journal_mode=WAL")
                    break
                except sqlite3.OperationalError as e:
                    if "locked" not in str(e) or time.monotonic() > deadline:
                        raise
                    time.sleep(0.01)
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        self._create()
        self._window_cols = {r["name"] for r in self.db.execute("PRAGMA table_info(windows)")}

    # -- schema and transactions -------------------------------------------------

    def _is_wafers(self, tables: set[str]) -> bool:
        """Whether a database with these tables is a wafer store: its ``meta``
        table has a schema version, and it has ``jobs``."""
        if not {"meta", "jobs"} <= tables:
            return False
        try:
            return self.db.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone() is not None
        except sqlite3.OperationalError:  # a table named meta without key (someone else's)
            return False

    @contextmanager
    def _tx(self):
        """A write transaction that takes the lock up front (no upgrade deadlocks)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def _create(self) -> None:
        dims = ", ".join(f"{n} {t}" for n, t in DIMENSIONS)
        mets = ", ".join(f"{n} {t}" for n, t in METRICS)
        wins = ", ".join(f"{n} NUMERIC" for n in _WINDOW_COLUMNS)
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            db.execute("INSERT OR IGNORE INTO meta VALUES ('created', ?)", (str(time.time()),))
            db.execute("CREATE TABLE IF NOT EXISTS studies (name TEXT PRIMARY KEY, definition TEXT, updated REAL)")
            db.execute(f"""CREATE TABLE IF NOT EXISTS jobs (
                id TEXT PRIMARY KEY, study TEXT, version TEXT NOT NULL, config TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')), error TEXT,
                {dims}, {mets}, result TEXT,
                owner TEXT, runs INTEGER NOT NULL DEFAULT 0, started REAL, finished REAL, heartbeat REAL,
                seconds REAL)""")
            db.execute("CREATE INDEX IF NOT EXISTS jobs_status ON jobs (study, status)")
            db.execute(f"""CREATE TABLE IF NOT EXISTS windows (
                job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE, window INTEGER NOT NULL, {wins},
                PRIMARY KEY (job_id, window))""")
        version = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        if str(version) != str(SCHEMA_VERSION):
            raise _core.ConfigError(f"{self.path}: store schema {version}, this wafer reads {SCHEMA_VERSION}")
        # Metrics added since a store was made get their (empty) column: old jobs read as unmeasured.
        have = {r[1] for r in self.db.execute("PRAGMA table_info(jobs)")}
        missing = [(n, t) for n, t in METRICS if n not in have]
        if missing:
            with self._tx() as db:
                have = {r[1] for r in db.execute("PRAGMA table_info(jobs)")}
                for n, t in missing:
                    if n not in have:
                        db.execute(f"ALTER TABLE jobs ADD COLUMN {n} {t}")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------

    def register_study(self, name: str, definition: dict[str, Any]) -> None:
        """Keep the study's definition (the parsed TOML) under its name."""
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO studies VALUES (?, ?, ?)",
                       (name, json.dumps(definition, sort_keys=True, default=str), time.time()))

    def claim(self, job, owner: str, *, study: str | None = None, retry_failed: bool = False,
              stale_after: float = 600.0) -> str:
        """Mark ``job`` (a :class:`wafer.sweep.Job`) as running under ``owner``
        unless there is no need: returns ``"claimed"``, ``"done"``, ``"failed"``
        (kept unless ``retry_failed``) or ``"busy"`` (a live sweep runs it)."""
        from ._core import __version__

        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT status, owner, heartbeat FROM jobs WHERE id = ?", (job.id,)).fetchone()
            if row is not None:
                if row["status"] == "done":
                    return "done"
                if row["status"] == "failed" and not retry_failed:
                    return "failed"
                if row["status"] == "running" and row["owner"] != owner and \
                        _owner_alive(row["owner"], row["heartbeat"], now, stale_after):
                    return "busy"
                db.execute("""UPDATE jobs SET status = 'running', error = NULL, owner = ?, runs = runs + 1,
                              started = ?, heartbeat = ?, finished = NULL WHERE id = ?""",
                           (owner, now, now, job.id))
                return "claimed"
            names = ["id", "study", "version", "config", "status", "owner", "runs", "started", "heartbeat",
                     *(n for n, _ in DIMENSIONS)]
            values = [job.id, study, __version__, job.to_json(), "running", owner, 1, now, now,
                      *(job.labels.get(n) for n, _ in DIMENSIONS)]
            db.execute(f"INSERT INTO jobs ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", values)
            return "claimed"

    def heartbeat(self, owner: str, ids: Iterable[str]) -> None:
        """Say that ``owner`` still runs these jobs."""
        ids = list(ids)
        if not ids:
            return
        with self._tx() as db:
            db.executemany("UPDATE jobs SET heartbeat = ? WHERE id = ? AND owner = ? AND status = 'running'",
                           [(time.time(), i, owner) for i in ids])

    def release(self, owner: str) -> int:
        """Forget the jobs ``owner`` claimed but did not finish (an interrupted
        sweep); returns how many."""
        with self._tx() as db:
            return db.execute("DELETE FROM jobs WHERE owner = ? AND status = 'running'", (owner,)).rowcount

    def finish(self, outcome: dict[str, Any], owner: str | None = None) -> None:
        """Store a job's outcome (see :func:`wafer.sweep.runner.run_job`):
        status, error, the summary metrics, the full result and its windows."""
        result = outcome.get("result")
        row: dict[str, Any] = {"status": outcome["status"], "error": outcome.get("error"),
                               "finished": time.time(), "seconds": outcome.get("seconds"), "heartbeat": None}
        windows: list[dict[str, Any]] = []
        if result is not None:
            summary = RunResult.from_dict(result).summary()
            row.update({n: summary.get(n) for n, _ in METRICS})
            row["result"] = json.dumps(result, separators=(",", ":"))
            windows = result.get("windows") or []
        else:
            row.update({n: None for n, _ in METRICS})
            row["result"] = None
        with self._tx() as db:
            sets = ", ".join(f"{k} = ?" for k in row)
            where = "id = ?" + (" AND owner = ?" if owner else "")
            args = [*row.values(), outcome["id"], *([owner] if owner else [])]
            if db.execute(f"UPDATE jobs SET {sets} WHERE {where}", args).rowcount == 0:
                return  # someone else reclaimed it (our claim went stale): theirs wins
            db.execute("DELETE FROM windows WHERE job_id = ?", (outcome["id"],))
            if windows:
                cols = list(windows[0].keys())
                self._ensure_window_columns(db, cols)
                names = ", ".join(["job_id", "window", *cols])
                db.executemany(f"INSERT INTO windows ({names}) VALUES ({', '.join('?' * (len(cols) + 2))})",
                               [(outcome["id"], i, *(w.get(c) for c in cols)) for i, w in enumerate(windows)])

    def _ensure_window_columns(self, db: sqlite3.Connection, cols: list[str]) -> None:
        missing = [c for c in cols if c not in self._window_cols]
        if not missing:
            return
        self._window_cols = {r["name"] for r in db.execute("PRAGMA table_info(windows)")}
        for c in missing:
            if c in self._window_cols:
                continue
            if not _NAME.match(c):
                raise ValueError(f"time-series column name {c!r}")
            db.execute(f"ALTER TABLE windows ADD COLUMN {c} NUMERIC")
            self._window_cols.add(c)

    # -- reading ---------------------------------------------------------------------

    def studies(self) -> dict[str, dict[str, Any]]:
        """Every study's definition by name."""
        return {r["name"]: self._json(r["definition"], f"study {r['name']}")
                for r in self.db.execute("SELECT * FROM studies")}

    def _json(self, text: str, what: str) -> Any:
        """A stored JSON text, or ConfigError naming the store and the row."""
        try:
            return json.loads(text)
        except (TypeError, ValueError) as e:
            raise _core.ConfigError(f"{self.path}: {what}: stored JSON that does not parse ({e}); "
                                    "a damaged store?") from None

    def statuses(self, ids: Iterable[str]) -> dict[str, str]:
        """The status of each of these jobs the store has (others are absent)."""
        cur = self.db.execute("SELECT id, status FROM jobs WHERE id IN (SELECT value FROM json_each(?))",
                              (json.dumps(list(ids)),))
        return {r["id"]: r["status"] for r in cur}

    def counts(self, study: str | None = None) -> dict[str, int]:
        """Jobs per status (``running``, ``done``, ``failed``)."""
        q = "SELECT status, COUNT(*) AS n FROM jobs" + (" WHERE study = ?" if study else "") + " GROUP BY status"
        out = {"running": 0, "done": 0, "failed": 0}
        out.update({r["status"]: r["n"] for r in self.db.execute(q, (study,) if study else ())})
        return out

    def running(self, study: str | None = None, *, stale_after: float = 600.0) -> list[dict[str, Any]]:
        """The jobs marked running: ``job``, ``owner``, ``heartbeat``,
        ``started``, and ``orphaned`` when their sweep is gone (its process no
        longer exists on this host, or its heartbeat is older than
        ``stale_after`` seconds): the next sweep runs them again."""
        q = "SELECT id, owner, heartbeat, started FROM jobs WHERE status = 'running'" + \
            (" AND study = ?" if study else "") + " ORDER BY rowid"
        now = time.time()
        return [{"job": r["id"], "owner": r["owner"], "heartbeat": r["heartbeat"], "started": r["started"],
                 "orphaned": not _owner_alive(r["owner"], r["heartbeat"], now, stale_after)}
                for r in self.db.execute(q, (study,) if study else ())]

    @staticmethod
    def _where(ids: Iterable[str] | None, study: str | None, status: str | None, table: str = "") -> tuple[str, list]:
        conds, args = [], []
        if study:
            conds.append(f"{table}study = ?")
            args.append(study)
        if status:
            conds.append(f"{table}status = ?")
            args.append(status)
        if ids is not None:
            conds.append(f"{table}id IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(list(ids)))
        return (" WHERE " + " AND ".join(conds)) if conds else "", args

    def to_pandas(self, ids: Iterable[str] | None = None, *, study: str | None = None, status: str | None = None):
        """One row per job: ``job`` (id), ``study``, ``status``, the dimensions,
        the metrics, ``error``, ``runs``, ``seconds`` (wall time of the job),
        ``finished`` (Unix seconds), ``version`` (a pandas DataFrame)."""
        import pandas as pd

        cols = ["id AS job", "study", "status", *(n for n, _ in DIMENSIONS), *(n for n, _ in METRICS),
                "error", "runs", "seconds", "finished", "version"]
        where, args = self._where(ids, study, status)
        cur = self.db.execute(f"SELECT {', '.join(cols)} FROM jobs{where} ORDER BY rowid", args)
        return pd.DataFrame([tuple(r) for r in cur.fetchall()], columns=[d[0] for d in cur.description])

    def to_arrow(self, ids: Iterable[str] | None = None, **kw: Any):
        """The same as :meth:`to_pandas`, as a ``pyarrow.Table``."""
        import pyarrow as pa

        return pa.Table.from_pandas(self.to_pandas(ids, **kw), preserve_index=False)

    def timeseries(self, ids: Iterable[str] | None = None, *, study: str | None = None):
        """The time series, tidy: one row per job x window, with the job's
        dimensions (a pandas DataFrame)."""
        import pandas as pd

        where, args = self._where(ids, study, None, table="j.")
        dims = ", ".join(f"j.{n}" for n, _ in DIMENSIONS)
        cur = self.db.execute(f"SELECT w.job_id AS job, {dims}, w.* FROM windows w JOIN jobs j ON j.id = w.job_id"
                              f"{where} ORDER BY j.rowid, w.window", args)
        names = [d[0] for d in cur.description]
        df = pd.DataFrame([tuple(r) for r in cur.fetchall()], columns=names)
        return df.loc[:, ~df.columns.duplicated()].drop(columns=["job_id"])

    def results(self, ids: Iterable[str] | None = None, *, study: str | None = None) -> list[RunResult]:
        """The stored results of finished jobs as :class:`RunResult` (a failed
        job's with its ``error`` and partial figures), each with ``config`` its
        engine configuration and ``labels`` its place in the study."""
        where, args = self._where(ids, study, None)
        where = (where + " AND " if where else " WHERE ") + "status != 'running'"
        out = []
        for r in self.db.execute(f"SELECT id, config, result, error FROM jobs{where} ORDER BY rowid", args):
            job = self._json(r["config"], f"job {r['id']}")
            lab = job.get("labels", {})
            if r["result"] is None:
                rr = RunResult.failed(lab.get("policy_name", "?"), lab.get("victim", "?"), lab.get("workload", "?"),
                                      int(lab.get("seed", 0)), r["error"] or "failed")
                rr.config = job.get("config") or {}
            else:
                rr = RunResult.from_dict(self._json(r["result"], f"job {r['id']}"), job.get("config"))
                rr.error = r["error"]
            rr.labels = lab
            out.append(rr)
        return out

    def export(self, path: str | os.PathLike, *, timeseries: bool = False, study: str | None = None) -> Path:
        """Write the jobs table (or the tidy time series) to ``path``: Parquet
        for ``.parquet``, CSV for ``.csv``."""
        path = Path(path)
        df = self.timeseries(study=study) if timeseries else self.to_pandas(study=study)
        if path.suffix == ".parquet":
            df.to_parquet(path, index=False)
        elif path.suffix == ".csv":
            df.to_csv(path, index=False)
        else:
            from ._core import ConfigError

            raise ConfigError(f"export: {path}: give a .parquet or .csv file name")
        return path
