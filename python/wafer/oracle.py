"""Future knowledge from Python: lifetime annotation and NoDaP's offline
configuration search (DOGI §3.1). Both take the arguments of
:func:`wafer.replay` that define the request stream."""

from __future__ import annotations

import json
from typing import Any, Callable

from . import _core
from .api import DEFAULT_WORKLOAD, run_config
from .progress import Progress


def annotate(workload: str = DEFAULT_WORKLOAD, **kwargs: Any) -> dict[str, Any]:
    """Annotate a stream with every block's death time. For a trace the
    annotation is cached in the cache folder (``cache_dir``, default
    ``~/.cache/wafer``: ``TRACE.<hash>.wlife``) and reused by later runs with
    the same trace, selection, repeat, block size and device size. Returns
    ``path``, ``reused``, ``cached``, ``writes``, ``bytes``, ``seconds``."""
    return json.loads(_core.annotate_json(json.dumps(run_config("base", workload, **kwargs))))


def search(
    workload: str = DEFAULT_WORKLOAD,
    *,
    min_gain: float | None = None,
    max_groups: int | None = None,
    progress: bool = False,
    on_trial: Callable[[dict[str, Any]], None] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """NoDaP's group-configuration search: replays the stream under candidate
    BIRs and sizes, from 2 groups up, until one more group lowers WAF by less
    than ``min_gain`` (unset: NoDaP's defaults, ``wafer.policies()``). The
    result's ``birs`` and ``sizes`` configure ``nodap``
    (``params={"birs": ..., "sizes": ...}``, or save the result as JSON and pass
    ``params={"config": FILE}``); it also lists every trial and the best
    configuration per group count. ``on_trial(trial)`` follows each replay."""
    cfg = run_config("nodap", workload, **kwargs)
    bar = Progress(None, "nodap search", enabled=progress)
    state = {"n": 0, "best": None}

    def report(text: str) -> None:
        t = json.loads(text)
        state["n"] += 1
        if t["waf"] is not None and (state["best"] is None or t["waf"] < state["best"][0]):
            state["best"] = (t["waf"], t["groups"])
        best = state["best"]
        bar.text(f"trial {state['n']}, {t['groups']} groups"
                 + (f", best WAF {best[0]:.3f} ({best[1]} groups)" if best else ""))
        if on_trial:
            on_trial(t)

    try:
        out = json.loads(_core.oracle_search_json(json.dumps(cfg), min_gain, max_groups, report))
    finally:
        bar.close()
    res = out["search"]
    res["annotation"] = out["annotation"]
    return res
