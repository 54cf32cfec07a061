"""AutoDB (AutoBlox §3.5): what tuning has learned, in one SQLite file.

* ``meta``: the workload clustering (JSON) and the constraints of the study;
* ``configs``: every configuration explored (its parameter vector as JSON and
  its timing preset as TOML), by a stable key;
* ``runs``: one row per (configuration, trace, evaluator): status (``ok``,
  ``invalid`` when it broke a constraint after validation, e.g. the power
  budget, ``crashed`` when the simulation failed), latency, throughput,
  energy, power, WAF, p99, endurance, flash programs, whether GC ran, each
  seed's metrics (``samples``), wall time. The evaluator is a key of
  everything a validation depends on besides the configuration and the
  trace (reference, arrival, drive, preconditioning, policy, seeds), so a
  validation made another way is never reused. (Files of wafer before
  issue 44 kept a ``validations`` table without it: it is left unread.)
* ``iterations``: the search's steps per target cluster (configuration,
  grade, tuning group, stall count), so a killed search resumes where it
  stopped.

The paper keeps this in LevelDB and the artifact in JSON files guarded by a
lock file; SQLite in WAL mode with a busy timeout lets parallel validations
write safely.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS configs (
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, params TEXT NOT NULL, preset TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    config_id INTEGER NOT NULL REFERENCES configs(id), cluster TEXT NOT NULL, trace TEXT NOT NULL,
    evaluator TEXT NOT NULL, status TEXT NOT NULL, latency_us REAL, throughput_bps REAL, energy_j REAL,
    power_w REAL, waf REAL, p99_us REAL, endurance REAL, flash_programs REAL, gc_ran INTEGER, write_share REAL,
    samples TEXT, error TEXT, seconds REAL, at REAL NOT NULL, PRIMARY KEY (config_id, trace, evaluator));
CREATE TABLE IF NOT EXISTS iterations (
    search TEXT NOT NULL, n INTEGER NOT NULL, config_id INTEGER NOT NULL, grade REAL,
    tuning_group INTEGER NOT NULL, stall INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (search, n));
"""

METRICS = ("latency_us", "throughput_bps", "energy_j", "power_w", "waf", "p99_us", "endurance", "flash_programs",
           "gc_ran", "write_share")


class AutoDB:
    """An AutoDB file (created if missing). ``evaluator`` scopes the
    validations read and written (see the module's doc)."""

    def __init__(self, path: str | Path, evaluator: str = ""):
        self.evaluator = evaluator
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, timeout=60)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA busy_timeout=60000")
        self.db.executescript(SCHEMA)
        self.db.commit()

    def close(self) -> None:
        self.db.close()

    # -- meta ---------------------------------------------------------------
    def set_meta(self, name: str, value: Any) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, json.dumps(value)))

    def meta(self, name: str, default: Any = None) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return json.loads(row[0]) if row else default

    # -- configurations -------------------------------------------------------
    def config_id(self, key: str, params: dict[str, Any], preset: str) -> int:
        """The id of a configuration, added if new."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO configs (key, params, preset) VALUES (?, ?, ?)",
                            (key, json.dumps(params), preset))
            return self.db.execute("SELECT id FROM configs WHERE key = ?", (key,)).fetchone()[0]

    def config(self, config_id: int) -> dict[str, Any]:
        params, preset = self.db.execute("SELECT params, preset FROM configs WHERE id = ?",
                                         (config_id,)).fetchone()
        return {"id": config_id, "params": json.loads(params), "preset": preset}

    # -- validations ------------------------------------------------------------
    def record(self, config_id: int, cluster: str, trace: str, status: str, metrics: dict[str, Any] | None = None,
               error: str | None = None, seconds: float | None = None) -> None:
        m = metrics or {}
        samples = json.dumps(m["samples"]) if "samples" in m else None
        with self.db:
            self.db.execute(
                f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * (9 + len(METRICS)))})",
                (config_id, cluster, trace, self.evaluator, status, *(m.get(k) for k in METRICS), samples, error,
                 seconds, time.time()))

    def validation(self, config_id: int, trace: str) -> dict[str, Any] | None:
        row = self.db.execute(
            f"SELECT status, {', '.join(METRICS)}, samples, error FROM runs "
            "WHERE config_id = ? AND trace = ? AND evaluator = ?", (config_id, trace, self.evaluator)).fetchone()
        if row is None:
            return None
        out = {"status": row[0], **dict(zip(METRICS, row[1:1 + len(METRICS)])), "error": row[-1]}
        if out["gc_ran"] is not None:
            out["gc_ran"] = bool(out["gc_ran"])
        out["samples"] = json.loads(row[-2]) if row[-2] else None
        return out

    def count(self) -> int:
        """Validations made by this evaluator."""
        return self.db.execute("SELECT count(*) FROM runs WHERE evaluator = ?", (self.evaluator,)).fetchone()[0]

    def rejected(self) -> set[int]:
        """Configurations that crashed or broke a constraint on any trace."""
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT config_id FROM runs WHERE status != 'ok' AND evaluator = ?", (self.evaluator,))}

    # -- search steps -----------------------------------------------------------
    def add_iteration(self, search: str, n: int, config_id: int, grade: float | None, group: int,
                      stall: int) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO iterations VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (search, n, config_id, grade, group, stall, time.time()))

    def iterations(self, search: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT n, config_id, grade, tuning_group, stall FROM iterations "
                               "WHERE search = ? ORDER BY n", (search,)).fetchall()
        return [dict(zip(("n", "config_id", "grade", "group", "stall"), r)) for r in rows]

    def best(self, search: str) -> dict[str, Any] | None:
        """The best graded configuration of a finished or running search (a
        known cluster's recommendation, returned at once)."""
        row = self.db.execute("SELECT config_id, grade FROM iterations WHERE search = ? AND grade IS NOT NULL "
                              "ORDER BY grade DESC, n LIMIT 1", (search,)).fetchone()
        if row is None:
            return None
        return {**self.config(row[0]), "grade": row[1]}
