"""A small progress bar on stderr, shown only when a run lasts more than
two seconds and stderr is a terminal (so quick runs, scripts and CI logs
stay quiet)."""

from __future__ import annotations

import sys
import time


def _si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.1f}{unit}"
    return f"{x:.0f}"


def _rate(x: float) -> str:
    return _si(x) if x >= 10 else f"{x:.2f}"


def _eta(seconds: float) -> str:
    """``"42s"``, ``"12m05s"``, ``"3h20m"``; ``"?"`` before the first completion."""
    if not seconds < float("inf"):
        return "?"
    s = int(seconds)
    if s < 100:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    def __init__(self, total: int | None, label: str, enabled: bool = True, delay: float = 2.0, stream=None,
                 unit: str = "blocks"):
        """``total`` None: an open-ended run (a trace), shown without a bar;
        ``unit`` names what is counted (``"blocks"`` of a replay, ``"jobs"`` of a sweep)."""
        self.unit = unit
        self.total = max(total, 1) if total is not None else None
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = enabled and (stream is not None or self.stream.isatty())
        self.delay = delay
        self.start = time.monotonic()
        self.shown = False
        self.last = 0.0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.start
        if elapsed < self.delay or now - self.last < 0.2:
            return
        self.last = now
        rate = done / elapsed if elapsed > 0 else 0.0
        if self.total is None:
            self.stream.write(f"\r{self.label:<24} {_si(done)} {self.unit}  {_si(rate)}/s")
            self.stream.flush()
            self.shown = True
            return
        frac = min(done / self.total, 1.0)
        width = 30
        fill = int(frac * width)
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        line = (
            f"\r{self.label:<24} [{'#' * fill}{'.' * (width - fill)}] {frac * 100:5.1f}% "
            f"{_si(done)}/{_si(self.total)} {self.unit}  {_rate(rate)}/s  ETA {_eta(eta)}"
        )
        self.stream.write(line)
        self.stream.flush()
        self.shown = True

    def text(self, msg: str) -> None:
        """Show a free-form status (e.g. a search's trial count) instead of a bar."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < 0.2:
            return
        self.last = now
        self.stream.write(f"\r{self.label:<24} {msg}\033[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
