"""Progress on stderr for runs that last more than a few seconds: a bar that
redraws itself on a terminal; elsewhere (a log, a pipe, CI) plain lines, one
per finished job or one every :data:`LINE_SECONDS` of a long run, so a quick
run stays quiet and a long one still tells the time. ``--quiet`` turns both
off."""

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


#: Off a terminal: nothing before this many seconds [s] ...
LINE_DELAY = 5.0
#: ... then a line per finished job, or one per this many seconds of a
#: replay's blocks or a free-form status [s].
LINE_SECONDS = 30.0


def _stream_is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    def __init__(self, total: int | None, label: str, enabled: bool = True, delay: float = 2.0, stream=None,
                 unit: str = "blocks", lines: bool | None = None):
        """``total`` None: an open-ended run (a trace), shown without a bar;
        ``unit`` names what is counted (``"blocks"`` of a replay, ``"jobs"`` of
        a sweep: off a terminal, a line per finished job). ``lines``: plain
        lines instead of a bar (default: when ``stream`` is not a terminal; a
        ``stream`` given without ``lines`` gets the bar)."""
        self.unit = unit
        self.total = max(total, 1) if total is not None else None
        self.label = label
        self.stream = stream or sys.stderr
        if lines is None:
            lines = stream is None and not _stream_is_terminal(self.stream)
        self.lines = lines
        self.enabled = enabled
        self.delay = max(delay, LINE_DELAY) if lines else delay
        self.start = time.monotonic()
        self.shown = False
        self.last = 0.0
        self.last_done = 0
        self.last_text = ""

    def _line_due(self, now: float, changed: bool) -> bool:
        """Off a terminal: a job finished, or a replay ran LINE_SECONDS more."""
        if self.unit == "jobs":
            return changed
        return changed and now - self.last >= LINE_SECONDS

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self.start
        if self.lines:
            changed = done != self.last_done
            self.last_done = done
            if elapsed < self.delay or not self._line_due(now, changed):
                return
            self.last = now
            rate = done / elapsed if elapsed > 0 else 0.0
            if self.total is None:
                self.stream.write(f"{self.label}: {_si(done)} {self.unit}, {_rate(rate)}/s, {_eta(elapsed)} so far\n")
            else:
                eta = (self.total - done) / rate if rate > 0 else float("inf")
                self.stream.write(f"{self.label}: {_si(done)}/{_si(self.total)} {self.unit} "
                                  f"({min(done / self.total, 1.0) * 100:.0f}%), {_rate(rate)}/s, ETA {_eta(eta)}\n")
            self.stream.flush()
            self.shown = True
            return
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
        if self.lines:
            changed = msg != self.last_text
            self.last_text = msg
            if now - self.start < self.delay or not changed or now - self.last < LINE_SECONDS:
                return
            self.last = now
            self.stream.write(f"{self.label}: {msg}\n")
            self.stream.flush()
            return
        if now - self.start < self.delay or now - self.last < 0.2:
            return
        self.last = now
        self.stream.write(f"\r{self.label:<24} {msg}\033[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.lines:
            if self.shown:
                self.stream.write(f"{self.label}: done in {_eta(time.monotonic() - self.start)}\n")
                self.stream.flush()
            return
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
