"""The oracle-gap decomposition (after DOGI §3.2, Figs. 3-4): how much of
the distance between a policy's WAF and NoDaP's comes from where the policy
puts user-written blocks, where GC relocates blocks, and the rest (its group
configuration: how many groups, what each holds, how large they are).

With W(X) the steady-state WAF of X (mean over seeds; the whole-run WAF if
the warm-up was not reached), P the policy, P+nu P with NoDaP's user
placement (exact lifetimes), P+ngc P with NoDaP's GC relocation, and
NoDaP the near-optimal oracle:

    gap           = W(P) - W(NoDaP)
    user first:     user = W(P) - W(P+nu)         gc = W(P+nu) - W(P+nu+ngc)
    GC first:       gc   = W(P) - W(P+ngc)        user = W(P+ngc) - W(P+nu+ngc)
    configuration = W(P+nu+ngc) - W(NoDaP)        (the same in both orders)
    average       = the mean of the two orders (the Shapley value of the two
                    oracle components): user + gc + configuration = gap

A component can be negative: the oracle's placement can hurt a policy whose
other parts were tuned around its own (e.g. MiDAS's group sizes).
"""

from __future__ import annotations

import math
from typing import Any

from .stats import mean_interval

VARIANTS = ("", "+nu", "+ngc", "+nu+ngc")
COMPONENTS = ("user", "gc", "configuration")
LABELS = {"user": "user placement", "gc": "GC relocation", "configuration": "group configuration"}


def study(policies: list[str], *, workload: str | None = "zipf:1.0", trace: dict[str, Any] | None = None,
          device: dict[str, Any] | None = None, victim: str = "greedy", seeds: list[int] | None = None,
          writes: int | None = None, drive_writes: float | None = None, nodap_search: bool = True,
          name: str = "gap") -> dict[str, Any]:
    """The runs a decomposition needs, as a study: every policy's four
    variants and NoDaP (searched, or DOGI's BIR ladder with ``nodap_search=False``)."""
    pols: list[Any] = [p + v for p in policies for v in VARIANTS]
    pols.append("nodap" if nodap_search else {"name": "nodap", "params": {"search": False}, "label": "nodap"})
    d: dict[str, Any] = {"name": name, "policies": pols, "victims": [victim], "seeds": seeds or [1],
                         "devices": [{"name": "device", **(device or {})}]}
    if trace:
        d["traces"] = [trace]
    else:
        d["workloads"] = [workload]
    if writes is not None:
        d["writes"] = writes
    if drive_writes is not None:
        d["drive_writes"] = drive_writes
    return d


def _metric(df) -> str:
    return "steady_waf" if df["steady_waf"].notna().all() else "waf"


def decompose(df, policy: str) -> dict[str, Any]:
    """The decomposition of ``policy`` from a sweep's table (one row per job,
    as :func:`wafer.sweep.run` returns), per seed then averaged: each
    component's mean and 95% interval over seeds."""
    done = df[df.status == "done"]
    names = {"P": policy, "nu": policy + "+nu", "ngc": policy + "+ngc", "both": policy + "+nu+ngc", "nodap": "nodap"}
    errors = {r.policy: str(r.error).splitlines()[0] for r in df[df.status == "failed"].itertuples()
              if r.policy in names.values()}
    have = done[done.policy.isin(names.values())]
    metric = _metric(have) if len(have) else "waf"
    by_seed: dict[int, dict[str, float]] = {}
    for r in have.itertuples():
        by_seed.setdefault(int(r.seed), {})[r.policy] = getattr(r, metric)
    per_seed = []
    for seed, w in sorted(by_seed.items()):
        if not all(names[k] in w and w[names[k]] is not None for k in names):
            continue
        W = {k: float(w[names[k]]) for k in names}
        uf = {"user": W["P"] - W["nu"], "gc": W["nu"] - W["both"], "configuration": W["both"] - W["nodap"]}
        gf = {"user": W["ngc"] - W["both"], "gc": W["P"] - W["ngc"], "configuration": W["both"] - W["nodap"]}
        per_seed.append({"seed": seed, "waf": W, "gap": W["P"] - W["nodap"], "user_first": uf, "gc_first": gf,
                         "average": {c: (uf[c] + gf[c]) / 2 for c in COMPONENTS}})
    out: dict[str, Any] = {"policy": policy, "metric": metric, "seeds": [s["seed"] for s in per_seed],
                           "errors": errors}
    if not per_seed:
        out["complete"] = False
        return out

    def agg(values: list[float]) -> dict[str, float]:
        n, m, h = mean_interval(values)
        return {"mean": m, "half": None if math.isnan(h) else h}

    out["complete"] = True
    out["waf"] = {names[k]: agg([s["waf"][k] for s in per_seed]) for k in names}
    out["gap"] = agg([s["gap"] for s in per_seed])
    for order in ("user_first", "gc_first", "average"):
        out[order] = {c: agg([s[order][c] for s in per_seed]) for c in COMPONENTS}
    g = out["gap"]["mean"]
    out["shares"] = {c: (out["average"][c]["mean"] / g if g else None) for c in COMPONENTS}
    return out


def _decomposable(policy: str) -> bool:
    """Whether ``policy`` is a registered practical policy (not a composite, not an oracle): one whose
    oracle-assisted variants a decomposition compares."""
    from ._core import PolicyError
    from .api import describe_policy

    try:
        d = describe_policy(policy)
    except PolicyError:
        return False
    return d["form"] is None and not d["needs_future"]


def find(runs) -> list[dict[str, Any]]:
    """Every decomposition a table of runs (one row per run: policy, seed,
    status, steady_waf, waf, error, and the setting's workload / device /
    victim / length) holds: each policy run with all of +nu, +ngc, +nu+ngc
    beside NoDaP in the same setting. Named ``POLICY @ SETTING`` when the
    runs span several settings."""
    keys = [k for k in ("workload", "device", "victim", "length") if k in runs]
    groups = list(runs.groupby(keys, sort=False)) if keys else [((), runs)]
    out = []
    for key, d in groups:
        names = set(d.policy)
        if "nodap" not in names:
            continue
        for p in dict.fromkeys(d.policy):
            if not _decomposable(p) or not all(p + v in names for v in VARIANTS[1:]):
                continue
            g = decompose(d, p)
            if len(groups) > 1:
                key = key if isinstance(key, tuple) else (key,)
                varying = [str(v) for k, v in zip(keys, key) if runs[k].nunique() > 1]
                g["policy"] = f"{p} @ {' · '.join(varying)}" if varying else p
            out.append(g)
    return out


def tidy(gaps: list[dict[str, Any]]):
    """One row per policy x order x component: ``policy``, ``order``
    (``user first``, ``GC first``, ``average``), ``component``, ``value``
    [WAF], ``half`` (95% half-width over seeds, None for one seed)."""
    import pandas as pd

    rows = []
    for g in gaps:
        if not g.get("complete"):
            continue
        for order, label in (("user_first", "user first"), ("gc_first", "GC first"), ("average", "average")):
            for c in COMPONENTS:
                rows.append({"policy": g["policy"], "order": label, "component": LABELS[c],
                             "value": g[order][c]["mean"], "half": g[order][c]["half"]})
    return pd.DataFrame(rows, columns=["policy", "order", "component", "value", "half"])


def run(policies: list[str], *, store=None, jobs: int | None = None, progress: bool = False,
        **kw: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Run the decomposition of each policy (keyword arguments: those of
    :func:`study`) on all cores. ``store`` keeps the runs (a path or an open
    :class:`wafer.store.Store`; default: in memory) and skips those it has.
    Returns one :func:`decompose` result per policy, and the runs' job ids."""
    from .store import Store
    from .sweep import load, run_study

    st = load(study(policies, **kw))
    ids = [j.id for j in st.jobs()]
    own = not isinstance(store, Store)
    db = Store(store) if own else store
    try:
        run_study(st, db, jobs=jobs, progress=progress)
        df = db.to_pandas(ids)
    finally:
        if own:
            db.close()
    return [decompose(df, p) for p in policies], ids


def format_gap(g: dict[str, Any]) -> str:
    """A plain-text table of one decomposition."""
    if not g.get("complete"):
        errs = "; ".join(f"{k}: {v}" for k, v in g.get("errors", {}).items()) or "missing runs"
        return f"{g['policy']}: the decomposition is incomplete ({errs})"

    def f(x: dict[str, float]) -> str:
        return f"{x['mean']:.3f}" + (f" ± {x['half']:.3f}" if x.get("half") is not None else "")

    what = "steady-state WAF" if g["metric"] == "steady_waf" else "WAF (warm-up not reached)"
    lines = [f"{g['policy']}: {what}, mean over {len(g['seeds'])} seed(s)"]
    w = max(len(k) for k in g["waf"])
    lines += [f"  {k:<{w}}  {f(v)}" for k, v in g["waf"].items()]
    lines.append(f"  distance to NoDaP: {f(g['gap'])}")
    lines.append("")
    head = f"  {'component':<20} {'user first':>16} {'GC first':>16} {'average':>16} {'share':>6}"
    lines += [head, "  " + "-" * (len(head) - 2)]
    for c in COMPONENTS:
        share = g["shares"][c]
        lines.append(f"  {LABELS[c]:<20} {f(g['user_first'][c]):>16} {f(g['gc_first'][c]):>16} "
                     f"{f(g['average'][c]):>16} {'-' if share is None else f'{share:.0%}':>6}")
    return "\n".join(lines)


LEGEND = """\
user first: user = W(P) - W(P+nu), GC = W(P+nu) - W(P+nu+ngc); GC first: GC = W(P) - W(P+ngc),
user = W(P+ngc) - W(P+nu+ngc); group configuration = W(P+nu+ngc) - W(NoDaP) in both; average: the mean of
the two orders (adds up to the distance); share: of the distance. +nu: NoDaP's user placement, +ngc: NoDaP's
GC relocation (exact lifetimes); a negative part means the oracle's choice hurt this policy."""
