"""Workload clustering (AutoBlox §3.1, Fig. 2).

A block trace is cut into windows of ``window`` entries (3,000 in the
paper). Each entry gives five features, transformed as the AutoBlox
artifact does (the paper only says "normalised to the window's first
entry"): time ``(ln(t - t0 + 1e-9 s) + 10) / 20`` with t in seconds from the
window's first entry, address ``ln(offset / 2^37 + 1e-9) / 2`` with the
offset relative to the trace's lowest address, size ``ln(sectors / 256) /
10``, the read flag, and the device index ``/ 33``. A window becomes one
flat vector ``[times, addresses, sizes, reads, devices]``; PCA reduces the
windows to 5 dimensions and k-means (scikit-learn) clusters them.

A new workload is the centre of its windows in PCA space; it belongs to the
nearest cluster if it lies closer than ``threshold`` (by default the
smallest distance between two cluster centres, as the paper's "minimum
inter-cluster distance"); otherwise it is a new cluster (k-means retrained
with k + 1 on everything seen). A trace's windows vote; a trace whose
runner-up cluster has at least half the votes of the winner is reported
with both (§3.1). The model persists as JSON (PCA components and k-means
centres), so a database built today classifies tomorrow's traces.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Entries per window (AutoBlox §3.1).
WINDOW = 3000
#: PCA dimensions (§3.1: 5 components hold 70.4% of the variance).
COMPONENTS = 5
#: Features per entry: time, address, size, read flag, device.
FEATURES = 5


def window_features(times_ns: np.ndarray, offsets: np.ndarray, sectors: np.ndarray, reads: np.ndarray,
                    devices: np.ndarray) -> np.ndarray:
    """The flat feature vector of one window (arrays of equal length)."""
    t = (times_ns - times_ns[0]).astype(np.float64) * 1e-9
    return np.concatenate([
        (np.log(t + 1e-9) + 10.0) / 20.0,
        np.log(offsets.astype(np.float64) / 2.0**37 + 1e-9) / 2.0,
        np.log(np.maximum(sectors.astype(np.float64), 1.0) / 256.0) / 10.0,
        reads.astype(np.float64),
        devices.astype(np.float64) / 33.0,
    ])


def trace_windows(path: str, *, format: str | None = None, window: int = WINDOW,
                  max_windows: int | None = None) -> np.ndarray:
    """The feature vectors of a trace's consecutive windows (one row each),
    read through wafer's trace readers (any layout they know)."""
    from .. import _core

    cols = _core.trace_columns(str(path), format, max_windows * window if max_windows else None)
    times, offsets, sizes, ops, devices = cols  # windows_of converts (ops arrive as bytes)
    return windows_of(times, offsets, sizes, ops, devices, window=window, max_windows=max_windows)


def windows_of(times_ns, offsets, sizes, ops, devices, *, window: int = WINDOW,
               max_windows: int | None = None) -> np.ndarray:
    """Windows of requests given as columns: times [ns], offsets and sizes
    [bytes], ops (0 read, 1 write, 2 trim), device ids."""
    times, offsets, sizes = np.asarray(times_ns), np.asarray(offsets), np.asarray(sizes)
    # A Rust Vec<u8> arrives as bytes.
    ops = np.frombuffer(ops, dtype=np.uint8) if isinstance(ops, (bytes, bytearray)) else np.asarray(ops)
    devices = np.asarray(devices)
    n = len(times) // window
    if max_windows is not None:
        n = min(n, max_windows)
    if n == 0:
        raise ValueError(f"a workload needs at least {window} requests for one window, it has {len(times)}")
    base = offsets.min()
    dev_ids = {d: i for i, d in enumerate(sorted(set(devices.tolist())))}
    dev_index = np.array([dev_ids[d] for d in devices.tolist()], dtype=np.float64)
    rows = []
    for k in range(n):
        s = slice(k * window, (k + 1) * window)
        rows.append(window_features(times[s], offsets[s] - base, sizes[s] / 512.0, ops[s] == 0, dev_index[s]))
    return np.vstack(rows)


@dataclass
class Clustering:
    """PCA + k-means over workload windows, and the categories' names."""

    components: np.ndarray
    mean: np.ndarray
    centres: np.ndarray
    names: list[str]
    threshold: float
    window: int = WINDOW
    seed: int = 0
    #: Windows seen per category (the training set's size, for reports).
    counts: list[int] = field(default_factory=list)

    @classmethod
    def fit(cls, windows: dict[str, np.ndarray], *, components: int = COMPONENTS, seed: int = 0,
            window: int = WINDOW) -> Clustering:
        """Fit on windows grouped by category name (k = number of categories)."""
        from sklearn.cluster import KMeans
        from sklearn.decomposition import PCA

        names = list(windows)
        x = np.vstack([windows[n] for n in names])
        pca = PCA(n_components=min(components, x.shape[0], x.shape[1]), random_state=seed).fit(x)
        z = pca.transform(x)
        # Each category's k-means centre starts at its own windows' mean, so a
        # cluster keeps its category's name.
        init = np.vstack([pca.transform(windows[n]).mean(axis=0) for n in names])
        km = KMeans(n_clusters=len(names), init=init, n_init=1, random_state=seed).fit(z)
        c = km.cluster_centers_
        return cls(components=pca.components_, mean=pca.mean_, centres=c, names=names,
                   threshold=_min_distance(c), window=window, seed=seed,
                   counts=[len(windows[n]) for n in names])

    def project(self, windows: np.ndarray) -> np.ndarray:
        """Windows in PCA space."""
        return (np.atleast_2d(windows) - self.mean) @ self.components.T

    def assign_windows(self, windows: np.ndarray) -> np.ndarray:
        """The nearest cluster of each window (indices into ``names``)."""
        z = self.project(windows)
        d = ((z[:, None, :] - self.centres[None, :, :]) ** 2).sum(axis=2)
        return d.argmin(axis=1)

    def classify(self, windows: np.ndarray) -> dict[str, Any]:
        """Which category a workload (its windows) belongs to: ``cluster`` (a
        name, or None when it is farther than ``threshold`` from every
        centre), ``also`` (a second cluster when the vote is close),
        ``distance`` to the nearest centre, and the window votes."""
        votes = Counter(self.assign_windows(windows).tolist())
        centre = self.project(windows).mean(axis=0)
        dist = np.sqrt(((self.centres - centre) ** 2).sum(axis=1))
        nearest = int(dist.argmin())
        ranked = votes.most_common(2)
        also = None
        if len(ranked) == 2 and 2 * ranked[1][1] > ranked[0][1]:
            also = self.names[ranked[1][0]]
        inside = float(dist[nearest]) < self.threshold
        return {
            "cluster": self.names[nearest] if inside else None,
            "also": also if inside else None,
            "distance": float(dist[nearest]),
            "threshold": self.threshold,
            "votes": {self.names[k]: v for k, v in votes.items()},
        }

    def own_cluster_share(self, windows: dict[str, np.ndarray]) -> dict[str, float]:
        """Per category, the share of its windows that land in its own cluster
        (the paper: 95% of validation windows)."""
        out = {}
        for name, w in windows.items():
            k = self.names.index(name)
            out[name] = float((self.assign_windows(w) == k).mean())
        return out

    def to_json(self) -> dict[str, Any]:
        return {"components": self.components.tolist(), "mean": self.mean.tolist(),
                "centres": self.centres.tolist(), "names": self.names, "threshold": self.threshold,
                "window": self.window, "seed": self.seed, "counts": self.counts}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Clustering:
        return cls(components=np.asarray(d["components"]), mean=np.asarray(d["mean"]),
                   centres=np.asarray(d["centres"]), names=list(d["names"]), threshold=float(d["threshold"]),
                   window=int(d["window"]), seed=int(d["seed"]), counts=list(d.get("counts", [])))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json()))

    @classmethod
    def load(cls, path: str | Path) -> Clustering:
        return cls.from_json(json.loads(Path(path).read_text()))


def _min_distance(centres: np.ndarray) -> float:
    """Smallest distance between two centres (infinite with one centre)."""
    best = math.inf
    for i in range(len(centres)):
        for j in range(i + 1, len(centres)):
            best = min(best, float(np.sqrt(((centres[i] - centres[j]) ** 2).sum())))
    return best
