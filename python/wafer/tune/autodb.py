"""AutoDB (AutoBlox §3.5): what tuning has learned, in one SQLite file.

* ``meta``: the workload clustering (JSON) and the constraints of the study;
* ``configs``: every configuration explored (its parameter vector as JSON and
  its timing preset as TOML), by a stable key;
* ``validations``: one row per (configuration, trace): status (``ok``,
  ``invalid`` when it broke a constraint after validation, e.g. the power
  budget, ``crashed`` when the simulation failed), latency, throughput,
  energy, power, WAF, wall time;
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
CREATE TABLE IF NOT EXISTS validations (
    config_id INTEGER NOT NULL REFERENCES configs(id), cluster TEXT NOT NULL, trace TEXT NOT NULL,
    status TEXT NOT NULL, latency_us REAL, throughput_bps REAL, energy_j REAL, power_w REAL, waf REAL,
    error TEXT, seconds REAL, at REAL NOT NULL, PRIMARY KEY (config_id, trace));
CREATE TABLE IF NOT EXISTS iterations (
    search TEXT NOT NULL, n INTEGER NOT NULL, config_id INTEGER NOT NULL, grade REAL,
    tuning_group INTEGER NOT NULL, stall INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (search, n));
"""

METRICS = ("latency_us", "throughput_bps", "energy_j", "power_w", "waf")


class AutoDB:
    """An AutoDB file (created if missing)."""

    def __init__(self, path: str | Path):
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
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO validations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (config_id, cluster, trace, status, *(m.get(k) for k in METRICS), error, seconds, time.time()))

    def validation(self, config_id: int, trace: str) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT status, latency_us, throughput_bps, energy_j, power_w, waf, error FROM validations "
            "WHERE config_id = ? AND trace = ?", (config_id, trace)).fetchone()
        if row is None:
            return None
        return {"status": row[0], **dict(zip(METRICS, row[1:6])), "error": row[6]}

    def rejected(self) -> set[int]:
        """Configurations that crashed or broke a constraint on any trace."""
        return {r[0] for r in self.db.execute(
            "SELECT DISTINCT config_id FROM validations WHERE status != 'ok'")}

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
