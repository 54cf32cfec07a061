"""Real block traces: formats, inspection, conversion to the native format.

Readers, decompression (gzip / xz / zstd by magic bytes) and statistics run
in Rust; see ``wafer traces formats`` for the layouts and units.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
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


def _watched(label: str, path: str, call: Callable[[], str], progress: bool, passes: int = 1) -> str:
    """``call()`` (a Rust call that reads ``path`` ``passes`` times, the GIL
    released) on a worker thread while this one draws its progress: the
    bytes read from the file against its size (compressed as stored). Quick
    calls stay quiet (the bar shows after 2 s, plain lines after 5 s)."""
    if not progress:
        return call()
    import threading

    from .progress import Progress

    try:
        total = os.path.getsize(path) * passes
    except OSError:
        return call()  # the call names the file
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = call()
        except BaseException as e:  # re-raised on the caller's thread
            out["error"] = e

    start = _core.trace_bytes_read()
    bar = Progress(total, label, unit="bytes")
    t = threading.Thread(target=run, name="wafer-trace-read", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.25)
        bar.update(min(_core.trace_bytes_read() - start, total))
    bar.close()
    if "error" in out:
        raise out["error"]
    return out["value"]


def inspect(path: str, format: str | None = None, *, block_size: int = 4096, capacity_blocks: int | None = None,
            selection: Selection | None = None, progress: bool = False) -> TraceStats:
    """Statistics of ``path`` (format detected when not given); ``progress``
    draws a progress line on stderr for a long read."""
    raw = json.loads(_watched(f"inspect {os.path.basename(path)}", str(path),
                              lambda: _core.inspect_json(str(path), format, (selection or Selection()).to_json(),
                                                         block_size, capacity_blocks), progress))
    keys = ("requests", "reads", "writes", "trims", "write_blocks", "footprint_blocks", "drive_writes", "fios")
    return TraceStats(**{k: raw[k] for k in keys}, raw=raw)


def convert(src: str, dst: str, format: str | None = None, *, selection: Selection | None = None,
            progress: bool = False) -> dict[str, Any]:
    """Write the selected requests of ``src`` to ``dst`` in the native format
    (an Arrow IPC file). Returns the read counts (lines, requests, skipped ...)."""
    return json.loads(_watched(f"convert {os.path.basename(src)}", str(src),
                               lambda: _core.convert_json(str(src), str(dst), format,
                                                          (selection or Selection()).to_json()), progress))


def split(path: str, out_dir: str, volumes: str | list | None = None, format: str | None = None, *,
          block_size: int = 4096, selection: Selection | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """Split the multi-volume trace ``path`` into one native trace per volume
    (device id) in ``out_dir``: ``volumes`` ``"all"`` (default), ``"top:N"``
    (the N that write the most bytes) or a list of device ids. Returns each
    volume's device, path, requests, reads, writes, bytes written and
    footprint (blocks of ``block_size``); a device the file does not hold is
    a :class:`TraceError` naming it. One pass over the file; each volume
    costs a small buffer, however many there are."""
    if volumes is None:
        volumes = "all"
    elif isinstance(volumes, (list, tuple)):
        if not volumes:
            raise _core.ConfigError("invalid trace selection: volumes: the list is empty")
        volumes = "+".join(str(v) for v in volumes)
    return json.loads(_watched(f"split {os.path.basename(path)}", str(path),
                               lambda: _core.split_json(str(path), str(out_dir), format,
                                                        (selection or Selection()).to_json(), str(volumes),
                                                        block_size), progress))


def split_cached(path: str, format: str | None = None, *, skip_bad: bool = False,
                 cache_dir: str | os.PathLike | None = None, progress: bool = False) -> list[dict[str, Any]]:
    """Every volume of ``path`` split once (:func:`split`) into wafer's cache
    folder (``split/``), keyed by the file's content (its SHA-256, read in
    one pass at ~1 GB/s; the split itself reads and writes it all) and the
    reader's settings: later calls (a study's every load) reuse it, and a
    file whose bytes changed is split again, whatever its size and
    modification time say."""
    import hashlib
    import shutil

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    key = json.dumps([digest.hexdigest(), format, skip_bad, 3])  # 3: each volume keeps its own clock
    root = _core.cache_dir(str(cache_dir) if cache_dir else None)
    if root is None:
        raise _core.ConfigError("invalid run configuration: cache_dir: no cache folder (set $WAFER_CACHE_DIR or "
                                "$HOME, or give cache_dir)")
    where = os.path.join(root, "split",
                         f"{os.path.basename(path).split('.')[0]}.{hashlib.sha256(key.encode()).hexdigest()[:16]}")
    index = os.path.join(where, "volumes.json")
    try:
        with open(index) as f:
            vols = json.load(f)
        if all(os.path.exists(v["path"]) for v in vols):
            return vols
    except (OSError, ValueError):
        pass
    tmp = f"{where}.{os.getpid()}.part"
    shutil.rmtree(tmp, ignore_errors=True)
    vols = split(path, tmp, "all", format, selection=Selection(skip_bad=skip_bad), progress=progress)
    for v in vols:
        v["path"] = os.path.join(where, os.path.basename(v["path"]))
    with open(os.path.join(tmp, "volumes.json"), "w") as f:
        json.dump(vols, f)
    shutil.rmtree(where, ignore_errors=True)
    os.replace(tmp, where)
    return vols


def extend(path: str, out: str, drive_writes: float, format: str | None = None, *, block_size: int = 4096,
           seed: int = 1, selection: Selection | None = None, progress: bool = False) -> dict[str, Any]:
    """Write the selected requests of ``path`` and a continuation to ``drive_writes``
    in all (of its footprint in ``block_size`` blocks) to ``out``, a native trace.
    The continuation keeps the trace's lifetimes (each block class's update
    intervals, Kaplan-Meier over what the trace shows), request sizes, read/write
    mix and locality; the model is documented in ``crates/wafer-core/src/trace/extend.rs``.
    Returns the format, footprint, drive-writes of the trace and of the file, and
    the continuation's counts."""
    # The trace is read twice: to learn its lifetimes, then to copy it.
    return json.loads(_watched(f"extend {os.path.basename(path)}", str(path),
                               lambda: _core.extend_json(str(path), str(out), format,
                                                         (selection or Selection()).to_json(), block_size,
                                                         float(drive_writes), seed), progress, passes=2))


#: Layouts ``sample`` can write: one line of text per request (see ``wafer traces formats``).
SAMPLE_FORMATS = ("msr", "msr-cut", "alibaba", "tencent", "blkparse")


def _sample_line(fmt: str, t_ns: int, lba: int, blocks: int, op: int, tenant: int, block_size: int) -> str:
    off, size = lba * block_size, blocks * block_size
    rw = "RW"[op == 1] if op != 2 else "D"
    if fmt == "msr":  # 100 ns ticks from the Windows epoch of 2008-01-01
        return f"{128437920000000000 + t_ns // 100},wafer,{tenant},{'Write' if op == 1 else 'Read'},{off},{size},0"
    if fmt == "msr-cut":
        return f"{t_ns / 1e6:.3f} {tenant} {off} {size} {0 if op == 1 else 1}"
    if fmt == "alibaba":
        return f"{tenant},{'W' if op == 1 else 'R'},{off},{size},{1577808000000000 + t_ns // 1000}"
    if fmt == "tencent":
        return f"{1538323200 + t_ns // 1_000_000_000},{off // 512},{size // 512},{1 if op == 1 else 0},{tenant}"
    # blkparse: issue (D) events of device 8,0
    return f"8,0 0 1 {t_ns // 1_000_000_000}.{t_ns % 1_000_000_000:09d} 1 D {rw} {off // 512} + {size // 512} [wafer]"


def sample(path: str, workload: str = "zipf:1.0", *, format: str = "msr", requests: int = 100_000,
           logical_blocks: int = 1 << 16, block_size: int = 4096, seed: int = 1) -> int:
    """Write the first ``requests`` requests of a synthetic ``workload`` on a
    ``logical_blocks``-block device as a trace file in ``format`` (one of
    :data:`SAMPLE_FORMATS`), e.g. to try a reader, a replay or a comparison
    on a known stream. Trims are left out of layouts without them. Returns
    the lines written."""
    if format not in SAMPLE_FORMATS:
        raise _core.ConfigError(f"invalid run configuration: format: cannot write '{format}'; "
                                f"sample writes {', '.join(SAMPLE_FORMATS)}")
    if requests < 1:
        raise _core.ConfigError(f"invalid run configuration: requests: {requests}; must be at least 1")
    cols = _core.workload_requests(workload, logical_blocks, block_size, requests, seed)
    n = 0
    with open(path, "w") as f:
        for t, lba, blocks, op, tenant in zip(*cols):
            if op == 2 and format != "blkparse":
                continue
            f.write(_sample_line(format, t, lba, blocks, op, tenant, block_size) + "\n")
            n += 1
    return n
