"""Results of a replay: a dataclass with the headline figures, the full
engine output in ``raw``, and the time series as columns."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

# The keys every machine-readable result carries, first and in this order.
HEADLINE = (
    "policy",
    "victim",
    "workload",
    "seed",
    "waf",
    "steady_waf",
    "extra_writes_per_user_write",
    "user_writes",
    "gc_writes",
    "drive_writes",
    "mean_victim_valid_ratio",
    "elapsed_seconds",
    "user_writes_per_second",
    "engine_bytes_per_physical_block",
)


@dataclass
class RunResult:
    """What one replay measured. ``waf`` = (user + GC writes) / user writes;
    ``steady_waf`` the same after the warm-up (None if not reached)."""

    policy: str
    victim: str
    workload: str
    seed: int
    waf: float | None
    steady_waf: float | None
    extra_writes_per_user_write: float | None
    user_writes: int
    gc_writes: int
    drive_writes: float
    mean_victim_valid_ratio: float | None
    elapsed_seconds: float
    user_writes_per_second: float
    engine_bytes_per_physical_block: float
    raw: dict[str, Any] = field(repr=False)
    config: dict[str, Any] = field(repr=False, default_factory=dict)
    #: Why the run could not complete (a row of :func:`wafer.compare`), else None.
    error: str | None = None
    #: Where the run sits in a study (workload, policy, victim, device, op, seed, length), if it came from one.
    labels: dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def from_json(cls, text: str, config: dict[str, Any] | None = None) -> RunResult:
        raw = json.loads(text)
        return cls(**{k: raw[k] for k in HEADLINE}, raw=raw, config=config or {})

    @classmethod
    def from_dict(cls, d: dict[str, Any], config: dict[str, Any] | None = None) -> RunResult:
        """The inverse of :meth:`to_dict` (``error`` and ``labels`` keys become those attributes)."""
        raw = {k: v for k, v in d.items() if k not in ("error", "labels")}
        for k, empty in (("warnings", []), ("groups", []), ("windows", [])):
            raw.setdefault(k, empty)
        r = cls(**{k: raw.get(k) for k in HEADLINE}, raw=raw, config=config or {})
        r.error = d.get("error")
        r.labels = d.get("labels") or {}
        return r

    @classmethod
    def failed(cls, policy: str, victim: str, workload: str, seed: int, error: str,
               partial: RunResult | None = None) -> RunResult:
        """A run that stopped with ``error``; its figures are those measured up to
        the error (``partial``), or empty."""
        if partial is not None:
            partial.error = error
            return partial
        raw: dict[str, Any] = {"warnings": [], "groups": [], "windows": []}
        return cls(policy=policy, victim=victim, workload=workload, seed=seed, waf=None, steady_waf=None,
                   extra_writes_per_user_write=None, user_writes=0, gc_writes=0, drive_writes=0.0,
                   mean_victim_valid_ratio=None, elapsed_seconds=0.0, user_writes_per_second=0.0,
                   engine_bytes_per_physical_block=0.0, raw=raw, error=error)

    @property
    def warnings(self) -> list[dict[str, str]]:
        """Why to distrust a number of this run: ``code`` (stable, e.g.
        ``gc-never-ran``, ``warm-up-not-reached``, ``short-steady-state``,
        ``timestamps-out-of-order``, ``implausible-duration``,
        ``device-larger-than-footprint``, ``segments-fitted``, ``prefill-transient``,
        ``periodic-repeat``, ``trace-shorter-than-asked``, ...) and ``message``."""
        return self.raw.get("warnings", [])

    @property
    def transient(self) -> bool:
        """Whether the figures are only the transient after the prefill (fewer
        than 1 drive-write after the warm-up: warning ``prefill-transient``)."""
        return any(w.get("code") == "prefill-transient" for w in self.warnings)

    @property
    def groups(self) -> list[dict[str, Any]]:
        """Per group: user_writes, gc_writes, segments, valid_blocks."""
        return self.raw["groups"]

    @property
    def erases(self) -> dict[str, Any]:
        """Erase count per segment: min, mean, max."""
        return self.raw["erases"]

    @property
    def policy_state(self) -> dict[str, Any] | None:
        """What the policy decided at run time, if it reports it (MiDAS: the
        group configuration, predicted and measured valid ratios)."""
        return self.raw.get("policy_state")

    @property
    def accuracy(self) -> dict[str, Any] | None:
        """Lifetime-prediction scores against the annotated truth (runs with
        ``accuracy=True`` or an oracle): ``user`` and ``gc`` reports with
        accuracy, confusion matrix, per-class precision/recall/F1 and, for two
        classes, binary precision/recall/F1 of the short-lived class."""
        return self.raw.get("accuracy")

    @property
    def training(self) -> dict[str, Any] | None:
        """What a learned policy's online training did: ``trainings``,
        ``seconds`` (wall time, part of ``elapsed_seconds``),
        ``last_examples``, ``last_loss``; ``None`` for other policies."""
        return self.raw.get("training")

    @property
    def timing(self) -> dict[str, Any] | None:
        """Timing mode's measurements (runs with ``timing=PRESET``), else
        ``None``: ``read_latency`` / ``write_latency`` (``device`` and
        ``end_to_end``: count, mean, min, p50, p90, p99, p999, p9999, max in
        µs), ``throughput`` (IOPS, bytes/s), ``utilisation`` (per channel and
        die), ``waits``, ``hits`` (cache, mapping table), ``flash`` (operations
        by cause), ``waf_with_mapping``, ``host_waf``, ``energy`` (J by
        component, ``average_power_w``), ``windows`` (time series, also in
        :meth:`timeseries`), ``simulated_seconds``, and the simulation's own
        speed (``requests_per_wall_second``, ``flash_ops_per_wall_second``)."""
        return self.raw.get("timing")

    @property
    def victim_valid_histogram(self) -> list[int]:
        """Victims per valid-ratio bin [0, .05), [.05, .1), ... [.95, 1]."""
        return self.raw["victim_valid_histogram"]

    def timeseries(self) -> dict[str, list]:
        """One column per statistic, one row per window (pandas/Arrow friendly).
        Timed runs add the timing columns (``end_seconds``, ``iops``,
        ``bandwidth_bytes_per_s``, ``read_mean_us``, ``read_p99_us``,
        ``write_mean_us``, ``write_p99_us``, ``flash_waf``), empty for the
        windows before timing started."""
        rows = self.raw["windows"]
        cols = list(rows[0].keys()) if rows else []
        out: dict[str, list] = {"window": list(range(len(rows)))}
        for c in cols:
            out[c] = [r[c] for r in rows]
        timed = {w["window"]: w for w in (self.timing or {}).get("windows", []) if w["window"] < len(rows)}
        if timed:
            for c in next(iter(timed.values())):
                if c != "window":
                    out[c] = [timed[i][c] if i in timed else None for i in range(len(rows))]
        return out

    def group_timeseries(self) -> dict[str, list]:
        """Each group's part of each window, one row per window and group (columns ``window``, ``group``,
        ``user_writes``, ``gc_writes``, ``victims``, ``victim_valid_ratio``, ``sealed_segments``,
        ``open_segments``, ``valid_blocks``): what MiDAS-Simulation prints per group every GB."""
        rows = self.raw.get("group_windows") or []
        cols = list(rows[0].keys()) if rows else ["window", "group"]
        return {c: [r[c] for r in rows] for c in cols}

    def to_arrow(self):
        """The time series as a ``pyarrow.Table`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.table(self.timeseries())

    def to_pandas(self):
        """The time series as a ``pandas.DataFrame`` (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.timeseries())

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready: the headline keys first, then the rest."""
        d = {k: getattr(self, k) for k in HEADLINE}
        if self.error is not None:
            d["error"] = self.error
        for k, v in self.raw.items():
            d.setdefault(k, v)
        return d

    def summary(self) -> dict[str, Any]:
        """One flat row: the headline keys, accuracy, training time, warnings, error."""
        row: dict[str, Any] = {k: getattr(self, k) for k in HEADLINE}
        for kind in ("user", "gc"):
            rep = (self.accuracy or {}).get(kind) or {}
            row[f"{kind}_accuracy"] = rep.get("accuracy")
            row[f"{kind}_classes"] = rep.get("classes")
            # What the accuracy is measured against: always answering the commonest class, and
            # the mean of the per-class recalls (a constant answer scores 1/classes).
            row[f"{kind}_majority"] = rep.get("majority")
            row[f"{kind}_balanced_accuracy"] = rep.get("balanced_accuracy")
        row["train_seconds"] = (self.training or {}).get("seconds")
        t = self.timing
        if t:
            row["iops"] = t["throughput"]["iops"]
            row["read_p99_us"] = t["read_latency"]["device"]["p99"]
            row["write_p99_us"] = t["write_latency"]["device"]["p99"]
            row["write_mean_us"] = t["write_latency"]["device"]["mean"]
            row["waf_with_mapping"] = t["waf_with_mapping"]
            row["average_power_w"] = t["energy"]["average_power_w"]
        row["warnings"] = ";".join(w["code"] for w in self.warnings)
        row["error"] = self.error
        return row


class ResultSet(list):
    """The runs of a comparison (a list of :class:`RunResult`) with their
    summary as a table: one row per run (see :meth:`RunResult.summary`)."""

    def summary(self) -> dict[str, list]:
        """The summary as columns."""
        rows = [r.summary() for r in self]
        cols = list(rows[0].keys()) if rows else []
        return {c: [row[c] for row in rows] for c in cols}

    def to_pandas(self):
        """The summary as a ``pandas.DataFrame``."""
        import pandas as pd

        return pd.DataFrame(self.summary())

    def to_arrow(self):
        """The summary as a ``pyarrow.Table``."""
        import pyarrow as pa

        return pa.table(self.summary())


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _acc(rep: dict[str, Any] | None) -> str:
    """An accuracy cell: the share right and, after a slash, the number of classes."""
    if not rep:
        return "-"
    return f"{rep['accuracy']:.3f}/{rep['classes']}"


def format_table(results: Iterable[RunResult], legend: bool = True) -> str:
    """A plain-text comparison table sorted by steady-state WAF (lowest
    first; runs without one by WAF), failed runs last; with ``legend`` a
    footer says what the columns mean and lists every warning and error."""
    results = list(results)
    ok = sorted((r for r in results if r.error is None),
                key=lambda r: (r.steady_waf is None, r.steady_waf or r.waf or 0.0))
    failed = [r for r in results if r.error is not None]
    rows = ok + failed
    head = ["policy", "victim", "WAF", "steady WAF", "user writes", "GC writes", "victim valid", "M writes/s"]
    body = [
        [
            r.policy,
            r.victim,
            _fmt(r.waf) if r.error is None else "failed",
            _fmt(r.steady_waf),
            str(r.user_writes),
            str(r.gc_writes),
            _fmt(r.mean_victim_valid_ratio),
            _fmt(r.user_writes_per_second / 1e6, 2),
        ]
        for r in rows
    ]
    trained = any(r.training for r in rows)
    if trained:
        head.append("train s")
        for b, r in zip(body, rows):
            b.append(_fmt((r.training or {}).get("seconds"), 2))
    timed = any(r.timing for r in rows)
    if timed:
        head += ["IOPS", "read p99 us", "write p99 us", "W"]
        for b, r in zip(body, rows):
            t = r.timing or {}
            b += [_fmt(t.get("throughput", {}).get("iops"), 0),
                  _fmt(t.get("read_latency", {}).get("device", {}).get("p99"), 1),
                  _fmt(t.get("write_latency", {}).get("device", {}).get("p99"), 1),
                  _fmt(t.get("energy", {}).get("average_power_w"), 2)]
    transient = any(r.transient for r in rows)
    if transient:
        head.append("note")
        for b, r in zip(body, rows):
            b.append(f"transient ({r.drive_writes:.2f} DW)" if r.transient else "")
    scored = any(r.accuracy for r in rows)
    if scored:
        head += ["user acc", "GC acc"]
        for b, r in zip(body, rows):
            acc = r.accuracy or {}
            b += [_acc(acc.get("user")), _acc(acc.get("gc"))]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(head), line(["-" * w for w in widths])] + [line(b) for b in body]
    if not legend:
        return "\n".join(out)
    out += [
        "",
        "sorted by steady WAF, lowest first. WAF = (user + GC writes) / user writes; steady WAF: after the warm-up.",
        "user / GC writes: blocks written by the workload / by GC relocation. victim valid: mean share of valid",
        "blocks in the segments GC collected. M writes/s: million user block writes per second of wall time.",
    ]
    if trained:
        out.append("train s: seconds of online model training (part of the run's wall time).")
    if timed:
        out.append("IOPS: host requests per simulated second; read / write p99: device latency percentiles [us]; "
                   "W: average power (timing mode).")
    if transient:
        out.append("transient: the figures are only the transient after the prefill (fewer than 1 drive-write "
                   "after the warm-up); write more (--drive-writes, or --extend for a short trace).")
    if scored:
        out.append("user / GC acc: share of the policy's lifetime-class predictions that were right, /N = over N "
                   "classes; accuracies over different classes do not compare.")
    seen: dict[str, list[str]] = {}
    for r in rows:
        for w in r.warnings:
            seen.setdefault(w["message"], []).append(f"{r.policy}/{r.victim}")
    for msg, who in seen.items():
        whom = "all runs" if len(who) == len(rows) and len(rows) > 1 else ", ".join(who)
        out.append(f"warning ({whom}): {msg}")
    for r in failed:
        out.append(f"failed ({r.policy}/{r.victim}): {r.error}")
    return "\n".join(out)
