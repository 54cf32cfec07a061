"""The bad-input census (issue 42 item 9): wafer's command line fed wrong
input on purpose, each case's outcome classed the way review-wave2.md Part 7
classed 551 of them.

Outcomes: ``ok`` (a case that should run ran), ``clear`` (refused with exit
2, one ``wafer: error`` line naming what the case says it must: the flag,
the file, the line), ``unclear`` (refused, but the message misses that),
``silent-wrong`` (a bad input that ran, or a result that changed),
``traceback``, ``panic`` (exit 70 or a Rust panic message), ``signal``,
``hang`` (past the timeout), ``refused-good`` (a good input refused).

    python tests/census.py             # the quick set (what CI runs through tests/test_census.py)
    python tests/census.py --long      # plus byte flips of checkpoints and native traces
    python tests/census.py --markdown  # the table for docs/RELIABILITY.md

The Rust side of the census is property-based: every trace reader, the
native reader and the checkpoint decoder on arbitrary or flipped bytes
(`WAFER_FUZZ_CASES=100000 cargo test --test integration survive`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SMALL = ["--logical-blocks", "65536", "--segment-blocks", "64", "--op", "0.15"]
MSR = "".join(f"{128166372003061629 + i * 1000},hm,0,{'Write' if i % 3 else 'Read'},{(i * 7919 % 4096) * 4096},4096,1\n"
              for i in range(3000))
OUTCOMES = ["ok", "clear", "unclear", "refused-good", "silent-wrong", "traceback", "panic", "signal", "hang"]
BAD = {"silent-wrong", "traceback", "panic", "signal", "hang", "refused-good"}


@dataclass
class Case:
    cls: str
    name: str
    argv: list[str]
    #: "error": must be refused; "ok": must run; "same": refused or the baseline's result.
    expect: str = "error"
    #: what a clear refusal names (all of them)
    names: list[str] = field(default_factory=list)
    limit_as: int | None = None
    baseline: str | None = None


def run(argv: list[str], cwd: Path, timeout: float, limit_as: int | None = None) -> tuple[int | None, str, str]:
    def limits():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    try:
        p = subprocess.run([sys.executable, "-m", "wafer", *argv], cwd=cwd, capture_output=True, text=True,
                           timeout=timeout, preexec_fn=limits, errors="replace")
    except subprocess.TimeoutExpired:
        return None, "", ""
    return p.returncode, p.stdout, p.stderr


def classify(c: Case, rc: int | None, out: str, err: str) -> str:
    if rc is None:
        return "hang"
    if rc < 0 or rc in (134, 137, 139):
        return "signal"
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if rc == 70 or "panicked at" in err:
        return "panic"
    if rc == 0:
        if c.expect == "ok":
            return "ok"
        if c.expect == "same":
            return "ok" if _result(out) == c.baseline else "silent-wrong"
        return "silent-wrong"
    if c.expect == "ok":
        return "refused-good"
    said = [ln for ln in err.splitlines() if ln.startswith("wafer") and "error" in ln]
    if said and all(n in err for n in c.names):
        return "clear"
    return "unclear"


def _result(out: str) -> str | None:
    """A result's deterministic part (no wall times, no paths)."""
    try:
        d = json.loads(out)
    except ValueError:
        return None

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if not any(w in k for w in ("second", "wall", "per_s", "checkpoint", "path"))}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return json.dumps(strip(d), sort_keys=True)


def fixtures(d: Path) -> dict[str, Path]:
    f = {}

    def put(name, data):
        p = d / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        f[name] = p
    put("good.csv", MSR)
    put("badline.csv", MSR + "1,hm,0,Erase,0,4096,1\n")
    put("binary.csv", bytes(random.Random(1).randrange(256) for _ in range(5000)))
    put("overlong.csv", MSR + "x" * (2 << 20) + "\n")
    put("empty.csv", "")
    put("negative.csv", "1,hm,0,Write,-4096,4096,1\n")
    put("study_types.toml", 'policies = [1, 2]\nworkloads = ["zipf:1.0"]\n')
    put("study_string.toml", 'policies = ["base"]\nworkloads = "zipf:1.0"\n')
    put("study_empty.toml", 'policies = []\nworkloads = ["zipf:1.0"]\n')
    put("study_policy.toml", 'policies = ["nosuch"]\nworkloads = ["zipf:1.0"]\n')
    put("study_workload.toml", 'policies = ["base"]\nworkloads = ["zipf:abc"]\n')
    put("study_binary.toml", b"\xff\xfe\x00policies")
    put("study_syntax.toml", 'policies = ["base"\nworkloads = ["zipf:1.0"]\n')
    put("store_empty.sqlite", b"")
    put("store_text.sqlite", "hello, not a database\n")
    put("junk.ckpt", "not a checkpoint")
    foreign = d / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("create table mine (x)")
    f["foreign.sqlite"] = foreign
    return f


def cases(d: Path, f: dict[str, Path], long: bool) -> list[Case]:
    rep = ["replay", "--policy", "base", "--workload", "zipf:1.0", *SMALL, "--drive-writes", "2"]
    unsized = ["replay", "--policy", "base", "--workload", "uniform", "--writes", "100"]
    cs = [
        # traces
        Case("traces", "malformed line", ["replay", "--trace", str(f["badline.csv"])],
             names=["badline.csv:3001", "Erase"]),
        Case("traces", "binary file", ["replay", "--trace", str(f["binary.csv"]), "--format", "msr"], names=["binary.csv"]),
        Case("traces", "overlong line", ["replay", "--trace", str(f["overlong.csv"]), "--format", "msr"],
             names=["overlong.csv:3001", "line break"]),
        Case("traces", "empty file", ["replay", "--trace", str(f["empty.csv"])], names=["empty.csv"]),
        Case("traces", "negative offset", ["replay", "--trace", str(f["negative.csv"]), "--format", "msr"],
             names=["negative.csv:1", "negative"]),
        Case("traces", "missing file", ["replay", "--trace", str(d / "nope.csv")], names=["nope.csv"]),
        Case("traces", "wrong --format", ["replay", "--trace", str(f["good.csv"]), "--format", "spc"],
             names=["good.csv"]),
        Case("traces", "a good trace", ["replay", "--trace", str(f["good.csv"]), "--json"], expect="ok"),
        # checkpoints
        Case("checkpoints", "junk file", ["replay", "--resume", str(f["junk.ckpt"])], names=["junk.ckpt"]),
        Case("checkpoints", "missing file", ["replay", "--resume", str(d / "none.ckpt")], names=["none.ckpt"]),
        Case("checkpoints", "/dev/zero", ["replay", "--resume", "/dev/zero"], names=["/dev/zero"]),
        # studies and stores
        *[Case("studies", n, ["sweep", "run", str(f[n]), "--store", str(d / f"{n}.sqlite")], names=[n])
          for n in ("study_types.toml", "study_string.toml", "study_empty.toml", "study_policy.toml",
                    "study_workload.toml", "study_binary.toml", "study_syntax.toml")],
        *[Case("stores", f"{cmd} on {n}", [*cmd.split(), str(f[n]), *extra], names=[n])
          for cmd, extra in (("report", ["-o", str(d / "rep")]), ("sweep status", []),
                             ("sweep export", ["-o", str(d / "out.csv")]))
          for n in ("store_empty.sqlite", "store_text.sqlite", "foreign.sqlite")],
        # parameters
        *[Case("parameters", " ".join(a), [*rep, *a], names=[a[0]]) for a in (
            ["--op", "nan"], ["--op", "inf"], ["--op", "-1"], ["--gc-reserve", "1"], ["--gc-reserve", "0"],
            ["--drive-writes", "nan"], ["--drive-writes", "-2"], ["--warmup-drive-writes", "nan"],
            ["--seed", "-1"], ["--seed", "1e3"], ["--writes", "0"], ["--segment-blocks", "0"],
            ["--memory-limit", "abc"], ["--memory-limit", "-5GiB"])],
        *[Case("parameters", " ".join(a), [*unsized, *a], names=[n]) for a, n in (
            (["--capacity", "abc"], "--capacity"), (["--capacity", "0"], "--capacity"),
            (["--victim", "nosuch"], "nosuch"), (["--policy", "nosuch"], "nosuch"),
            (["--timing", "intel750", "--think-us", "nan"], "--think-us"),
            (["--timing", "intel750", "--precondition", "-1"], "--precondition"),
            (["--timing", "intel750", "--queue-depth", "0"], "--queue-depth"),
            (["--timing", "nosuch"], "nosuch"),
            (["--timing", "intel750", "--segment-blocks", "64"], "--segment-blocks"),
            (["--timing", "intel750", "--block-size", "8192"], "--block-size"),
            (["--arrival", "closed"], "--arrival"))],
        Case("parameters", "bad workload spec", ["replay", "--policy", "base", "--workload", "zipf:abc", *SMALL],
             names=["zipf:abc"]),
        Case("parameters", "a good run", [*rep, "--json"], expect="ok"),
        # resource limits
        Case("limits", "4 TiB under ulimit -v 8 GB", ["replay", "--policy", "base", "--workload", "uniform",
                                                     "--capacity", "4TiB", "--writes", "1000"],
             names=["memory"], limit_as=8 << 30),
        Case("limits", "--queue-depth 1e9 on a small timed run",
             ["replay", "--policy", "base", "--workload", "uniform", "--writes", "3277", "--logical-blocks",
              str(1 << 20), "--op", "0.3", "--timing", "intel750", "--fit-device", "--precondition", "0",
              "--queue-depth", "1000000000", "--arrival", "closed", "--json"],
             expect="ok", limit_as=4 << 30),
    ]
    # A checkpoint, and resume's conflicting flags (also at their default value).
    ck = d / "run.ckpt"
    rc, out, err = run([*rep, "--checkpoint", str(ck), "--checkpoint-every", "0.5", "--json"], d, 300)
    if rc == 0 and ck.exists():
        base = _result(out)
        cs += [Case("checkpoints", f"--resume with {a}", ["replay", "--resume", str(ck), *a], names=[a[0]])
               for a in (["--policy", "base"], ["--seed", "1"], ["--policy", "sepbit"])]
        cs.append(Case("checkpoints", "resume", ["replay", "--resume", str(ck), "--json"], expect="same",
                       baseline=base))
        body = ck.read_bytes()
        rng = random.Random(42)
        flips = 40 if long else 6
        for i in range(flips):
            at = rng.randrange(len(body))
            p = d / f"flip{i}.ckpt"
            p.write_bytes(body[:at] + bytes([body[at] ^ 0xFF]) + body[at + 1:])
            cs.append(Case("checkpoints", f"byte {at} flipped", ["replay", "--resume", str(p), "--json"],
                           expect="same", baseline=base, names=[p.name]))
        p = d / "torn.ckpt"
        p.write_bytes(body[: len(body) // 2])
        cs.append(Case("checkpoints", "torn in half", ["replay", "--resume", str(p)], names=["torn.ckpt"]))
    return cs


def census(long: bool = False, timeout: float = 120.0, log=None) -> dict:
    with tempfile.TemporaryDirectory(prefix="wafer-census-") as tmp:
        d = Path(tmp)
        f = fixtures(d)
        rows = []
        for c in cases(d, f, long):
            rc, out, err = run(c.argv, d, timeout, c.limit_as)
            outcome = classify(c, rc, out, err)
            last = (err.strip().splitlines() or [""])[-1][:160]
            rows.append({"class": c.cls, "case": c.name, "outcome": outcome, "rc": rc, "message": last})
            if log:
                log(f"{outcome:13} {c.cls:12} {c.name}: {last}")
    table = defaultdict(Counter)
    for r in rows:
        table[r["class"]][r["outcome"]] += 1
    return {"rows": rows, "table": {k: dict(v) for k, v in table.items()}}


def markdown(res: dict) -> str:
    cols = [o for o in OUTCOMES if any(o in t for t in res["table"].values())]
    lines = ["| class | cases | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    total = Counter()
    for cls, t in res["table"].items():
        total.update(t)
        lines.append(f"| {cls} | {sum(t.values())} | " + " | ".join(str(t.get(o, 0)) for o in cols) + " |")
    lines.append(f"| **all** | **{sum(total.values())}** | " + " | ".join(f"**{total.get(o, 0)}**" for o in cols)
                 + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--long", action="store_true", help="more byte flips")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--json", action="store_true", help="print every case as JSON")
    a = ap.parse_args()
    res = census(a.long, log=None if (a.json or a.markdown) else print)
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(markdown(res))
    bad = [r for r in res["rows"] if r["outcome"] in BAD]
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
