"""Colours and panels shared by the interactive and the static figures.

A policy's colour says its family (greys: no separation, blues: rule-based,
greens: stream, oranges: learned, purples: oracle-assisted, reds: oracles);
within a family policies get different shades and, on line plots, different
dashes."""

from __future__ import annotations

from typing import Any

from .data import FAMILIES

PALETTES = {
    "no separation": ["#4d4d4d", "#8c8c8c", "#b0b0b0"],
    "rule-based": ["#1f5fa8", "#3a9ad9", "#0f8b8d", "#6c8ebf", "#2c3e9e", "#5bc0de", "#136f63"],
    "learned": ["#d35400", "#f39c12", "#a04000", "#e67e22", "#c0902b", "#ff9f5a"],
    "oracle-assisted": ["#6a3d9a", "#9b59b6", "#4a235a", "#b07cc6", "#7d3c98", "#c39bd3"],
    "oracle": ["#c0392b", "#7b1d1d", "#e74c3c", "#a93226"],
    "stream": ["#1e8449", "#52be80", "#0b5345", "#7dcea0", "#239b56", "#a9dfbf"],
    "unregistered": ["#7f7f7f", "#a6a6a6"],
}
DASHES = ["solid", "dash", "dot", "dashdot", "longdash"]
MPL_DASHES = {"solid": "-", "dash": "--", "dot": ":", "dashdot": "-.", "longdash": (0, (8, 3))}
#: Columns that may name a panel, in the order panel titles list them.
PANEL_KEYS = ("workload", "device", "victim", "length")


def policy_styles(policies: list[str], families: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per policy: ``color``, ``dash`` and ``family``, shades and dashes cycling within a family."""
    seen: dict[str, int] = {}
    out = {}
    for p in policies:
        f = families.get(p, "rule-based")
        i = seen.get(f, 0)
        seen[f] = i + 1
        pal = PALETTES.get(f, PALETTES["rule-based"])
        out[p] = {"color": pal[i % len(pal)], "dash": DASHES[i % len(DASHES)], "family": f}
    return out


def styles_of(tables) -> dict[str, dict[str, Any]]:
    fam = dict(zip(tables.runs.policy, tables.runs.family))
    return policy_styles(tables.policies, fam)


def varying(df, keys=PANEL_KEYS, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The columns of ``keys`` (less ``skip``) that take more than one value in ``df``."""
    return [k for k in keys if k not in skip and k in df and df[k].nunique(dropna=False) > 1]


def with_panel(df, keys: list[str]):
    """``df`` with a ``panel`` column naming its combination of ``keys`` (``"all"`` with none)."""
    df = df.copy()
    if keys:
        panel = df[keys[0]].astype(str)
        for k in keys[1:]:
            panel = panel + " · " + df[k].astype(str)
        df["panel"] = panel
    else:
        df["panel"] = "all"
    return df


def parts(grouped) -> dict:
    """The sub-frames of a frame indexed by (panel, policy, ...), by (panel, policy)."""
    return {k: d.droplevel([0, 1]) for k, d in grouped.groupby(level=[0, 1], sort=False)}


def panels_of(df) -> list[str]:
    """Panels in first-seen order."""
    return list(dict.fromkeys(df["panel"]))


def families_present(styles: dict[str, dict[str, Any]], policies: list[str]) -> list[str]:
    present = {styles[p]["family"] for p in policies}
    return [f for f in FAMILIES if f in present]
