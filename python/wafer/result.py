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

    @classmethod
    def from_json(cls, text: str, config: dict[str, Any] | None = None) -> RunResult:
        raw = json.loads(text)
        return cls(**{k: raw[k] for k in HEADLINE}, raw=raw, config=config or {})

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
    def victim_valid_histogram(self) -> list[int]:
        """Victims per valid-ratio bin [0, .05), [.05, .1), ... [.95, 1]."""
        return self.raw["victim_valid_histogram"]

    def timeseries(self) -> dict[str, list]:
        """One column per statistic, one row per window (pandas/Arrow friendly)."""
        rows = self.raw["windows"]
        cols = list(rows[0].keys()) if rows else []
        out: dict[str, list] = {"window": list(range(len(rows)))}
        for c in cols:
            out[c] = [r[c] for r in rows]
        return out

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
        for k, v in self.raw.items():
            d.setdefault(k, v)
        return d


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def format_table(results: Iterable[RunResult]) -> str:
    """A plain-text comparison table, best steady-state WAF first."""
    rows = sorted(results, key=lambda r: (r.steady_waf is None, r.steady_waf or r.waf or 0.0))
    head = ["policy", "victim", "WAF", "steady WAF", "user writes", "GC writes", "victim valid", "M writes/s"]
    body = [
        [
            r.policy,
            r.victim,
            _fmt(r.waf),
            _fmt(r.steady_waf),
            str(r.user_writes),
            str(r.gc_writes),
            _fmt(r.mean_victim_valid_ratio),
            _fmt(r.user_writes_per_second / 1e6, 2),
        ]
        for r in rows
    ]
    if any(r.training for r in rows):
        head.append("train s")
        for b, r in zip(body, rows):
            b.append(_fmt((r.training or {}).get("seconds"), 2))
    if any(r.accuracy for r in rows):
        head += ["user acc", "GC acc"]
        for b, r in zip(body, rows):
            acc = r.accuracy or {}
            b += [_fmt((acc.get(k) or {}).get("accuracy")) for k in ("user", "gc")]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])
