"""Real block traces: formats, inspection, conversion to the native format.

Readers, decompression (gzip / xz / zstd by magic bytes) and statistics run
in Rust; see ``wafer traces formats`` for the layouts and units.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from . import _core


def formats() -> list[dict[str, str]]:
    """Every trace format: ``name`` and ``description`` (layout and units)."""
    return json.loads(_core.trace_formats_json())


def detect(path: str) -> str:
    """The format of ``path``, told from its first lines (or the native magic)."""
    return _core.detect_format(str(path))


@dataclass
class Selection:
    """What part of a trace to use. ``device`` is ``"N"`` or ``"MAJ,MIN"`` (fiu,
    blkparse); times are seconds after the first selected request."""

    device: str | None = None
    start_seconds: float | None = None
    end_seconds: float | None = None
    max_requests: int | None = None
    drop_reads: bool = False
    skip_bad: bool = False

    def to_json(self) -> str:
        d = dict(self.__dict__)
        if d["device"] is not None:
            d["device"] = str(d["device"])
        return json.dumps(d)


@dataclass
class TraceStats:
    """Workload statistics of a trace: request mix, sizes, footprint,
    drive-writes, the FIOS attributes (``fios``: acf, random_write_ratio,
    reuse_ratio, avg_write_kib, working_volume_kib, write_gb_per_day,
    peak_iops_5min, iops) and the block update-interval distribution."""

    requests: int
    reads: int
    writes: int
    trims: int
    write_blocks: int
    footprint_blocks: int
    drive_writes: float | None
    fios: dict[str, Any]
    raw: dict[str, Any] = field(repr=False)

    def __getattr__(self, name: str) -> Any:
        raw = self.__dict__.get("raw", {})
        if name in raw:
            return raw[name]
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.raw)


def inspect(path: str, format: str | None = None, *, block_size: int = 4096, capacity_blocks: int | None = None,
            selection: Selection | None = None) -> TraceStats:
    """Statistics of ``path`` (format detected when not given)."""
    raw = json.loads(_core.inspect_json(str(path), format, (selection or Selection()).to_json(), block_size,
                                        capacity_blocks))
    keys = ("requests", "reads", "writes", "trims", "write_blocks", "footprint_blocks", "drive_writes", "fios")
    return TraceStats(**{k: raw[k] for k in keys}, raw=raw)


def convert(src: str, dst: str, format: str | None = None, *, selection: Selection | None = None) -> dict[str, Any]:
    """Write the selected requests of ``src`` to ``dst`` in the native format
    (an Arrow IPC file). Returns the read counts (lines, requests, skipped ...)."""
    return json.loads(_core.convert_json(str(src), str(dst), format, (selection or Selection()).to_json()))
