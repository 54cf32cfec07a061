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
            ["--memory-limit", "abc"], ["--memory-limit", "-5GiB"], ["--logical-blocks", "-5"],
            ["--logical-blocks", "0"], ["--block-size", "1000000000000"], ["--block-size", "-4096"],
            ["--physical-blocks", "-1"], ["--check-every", "-1"])],
        Case("parameters", "--extend -1", ["replay", "--trace", str(f["good.csv"]), "--extend", "-1"],
             names=["--extend"]),
        Case("parameters", "--max-groups -1", ["oracle", "search", "--workload", "zipf:1.0", *SMALL, "--max-groups",
                                               "-1"], names=["--max-groups"]),
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
    # native traces with flipped bytes: refused, or the same replay
    native = d / "good.arrow"
    run(["traces", "convert", str(f["good.csv"]), str(native)], d, 120)
    rc, out, _ = run(["replay", "--trace", str(native), "--json"], d, 120)
    if rc == 0:
        base = _result(out)
        cs += _flips("traces", "native byte", native.read_bytes(), d / "flip{}.arrow", 7, 40 if long else 6,
                     lambda p: ["replay", "--trace", str(p), "--json"], base)
    # models: a trained DOGI model, damaged in the ways a file is
    model = d / "dogi.safetensors"
    rc, _, _ = run(["train", "dogi", "--workload", "zipf:1.0", *SMALL, "--drive-writes", "2", "-o", str(model),
                    "--quiet"], d, 300)
    if rc == 0 and model.exists():
        other = d / "phftl.safetensors"
        run(["train", "phftl", "--workload", "zipf:1.0", *SMALL, "--drive-writes", "2", "-o", str(other),
             "--quiet"], d, 300)
        for name, data in _damaged_models(model.read_bytes()).items():
            (d / name).write_bytes(data)
        (d / "adir.safetensors").mkdir()
        use = ["replay", "--policy", "dogi", "--workload", "zipf:1.0", *SMALL, "--drive-writes", "1", "--param"]
        cs += [Case("models", n, [*use, f"model={d / n}"], names=[n]) for n in (
            "empty.safetensors", "text.safetensors", "half.safetensors", "huge-header.safetensors",
            "header-flipped.safetensors", "nan.safetensors", "phftl.safetensors", "none.safetensors",
            "adir.safetensors")]
        cs.append(Case("models", "a good model", [*use, f"model={model}", "--param", "retrain=0", "--json"],
                       expect="ok"))
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
        cs += _flips("checkpoints", "byte", body, d / "flip{}.ckpt", 42, 40 if long else 6,
                     lambda p: ["replay", "--resume", str(p), "--json"], base)
        p = d / "torn.ckpt"
        p.write_bytes(body[: len(body) // 2])
        cs.append(Case("checkpoints", "torn in half", ["replay", "--resume", str(p)], names=["torn.ckpt"]))
    return cs


def _flips(cls: str, what: str, body: bytes, name: Path, seed: int, n: int, argv, base: str | None) -> list[Case]:
    """``n`` copies of ``body``, each with one byte flipped (xor 0xff) at a
    seeded position, written to ``name`` (``{}`` the copy's number); each a
    case that must be refused naming the file or give the ``base`` result."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        at = rng.randrange(len(body))
        p = Path(str(name).format(i))
        p.write_bytes(body[:at] + bytes([body[at] ^ 0xFF]) + body[at + 1:])
        out.append(Case(cls, f"{what} {at} flipped", argv(p), expect="same", baseline=base, names=[p.name]))
    return out


def _damaged_models(body: bytes) -> dict[str, bytes]:
    """A safetensors model damaged the ways files are: empty, text, torn,
    a header length past the end, a flipped header byte, a NaN weight."""
    import struct
    n = struct.unpack("<Q", body[:8])[0]
    head = json.loads(body[8:8 + n])
    first = next(v for k, v in head.items() if k != "__metadata__")
    at = 8 + n + first["data_offsets"][0]
    nan = bytearray(body)
    nan[at:at + 4] = struct.pack("<f", float("nan"))
    flipped = bytearray(body)
    flipped[13] ^= 0x55
    return {"empty.safetensors": b"", "text.safetensors": b"hello, not a model\n",
            "half.safetensors": body[: len(body) // 2], "huge-header.safetensors": b"\xff" * 8 + body[8:],
            "header-flipped.safetensors": bytes(flipped), "nan.safetensors": bytes(nan)}


#: The Python API fed wrong input: (name, statement, what the error names).
#: ``R(**kw)`` replays zipf:1.0 for one drive-write of a small device;
#: ``dev(**kw)`` is that device.
API = [
    ("unknown policy", "R(policy='nosuch')", ["nosuch"]),
    ("bad workload spec", "R(workload='zipf:abc')", ["zipf:abc"]),
    ("workload of the wrong type", "R(workload=42)", ["workload"]),
    ("seed -1", "R(seed=-1)", ["seed"]),
    ("seed 2**64", "R(seed=2**64)", ["seed"]),
    ("seed 'x'", "R(seed='x')", ["seed"]),
    ("seed 1.5", "R(seed=1.5)", ["seed"]),
    ("drive_writes nan", "R(drive_writes=float('nan'))", ["drive_writes"]),
    ("drive_writes -1", "R(drive_writes=-1)", ["drive_writes"]),
    ("writes 0", "R(drive_writes=None, writes=0)", ["writes"]),
    ("writes 2.5", "R(drive_writes=None, writes=2.5)", ["writes"]),
    ("unknown victim", "R(victim='nosuch')", ["nosuch"]),
    ("unknown setup", "R(setup='nosuch')", ["setup", "nosuch"]),
    ("unknown timing preset", "R(timing='nosuch')", ["nosuch"]),
    ("queue_depth 0", "T(queue_depth=0)", ["queue_depth"]),
    ("queue_depth -1", "T(queue_depth=-1)", ["queue_depth"]),
    ("think_ns -1", "T(think_ns=-1)", ["think"]),
    ("precondition nan", "T(precondition=float('nan'))", ["precondition"]),
    ("unknown arrival", "T(arrival='nosuch')", ["arrival"]),
    ("params not a mapping", "R(params=[1, 2])", ["parameters"]),
    ("unknown parameter", "R(policy='sepbit', params={'nosuch': 1})", ["nosuch"]),
    ("parameter of the wrong type", "R(policy='dogi', params={'retrain': 'abc'})", ["abc"]),
    ("memory_limit 'abc'", "R(memory_limit='abc')", ["memory_limit"]),
    ("memory_limit -1", "R(memory_limit=-1)", ["memory_limit"]),
    ("missing trace", "R(trace='/nonexistent.csv')", ["/nonexistent.csv"]),
    ("unknown trace format", "R(trace=GOOD, format='nosuch')", ["nosuch"]),
    ("repeat 0", "R(trace=GOOD, repeat=0)", ["repeat"]),
    ("extend -1", "R(trace=GOOD, extend=-1.0)", ["extend"]),
    ("extend without a trace", "R(extend=2.0)", ["extend"]),
    ("checkpoint_every nan", "R(checkpoint=TMP + '/x.ckpt', checkpoint_every=float('nan'))", ["checkpoint_every"]),
    ("Device op nan", "dev(op=float('nan'))", ["op"]),
    ("Device op -1", "dev(op=-1)", ["op"]),
    ("Device op 'x'", "dev(op='x')", ["op"]),
    ("Device logical_blocks -5", "dev(logical_blocks=-5)", ["logical_blocks"]),
    ("Device block_size 2**40", "dev(block_size=2**40)", ["block_size"]),
    ("Device capacity 'abc'", "wafer.Device(capacity='abc')", ["capacity"]),
    ("Device unknown field", "wafer.Device(nosuch=1)", ["nosuch"]),
    ("Device gc_low 1", "dev(gc_low=1)", ["gc_low"]),
    ("parse_size 'abc'", "wafer.parse_size('abc')", ["abc"]),
    ("parse_size -5", "wafer.parse_size(-5)", ["-5"]),
    ("parse_size [1]", "wafer.parse_size([1])", ["[1]"]),
    ("resume a missing file", "wafer.resume('/nonexistent.ckpt')", ["/nonexistent.ckpt"]),
    ("resume a directory", "wafer.resume(TMP)", [""]),
    ("compare []", "wafer.compare([], 'zipf:1.0', device=dev(), drive_writes=1)", ["policies"]),
    ("compare 'base' (a string)", "wafer.compare('base', 'zipf:1.0', device=dev(), drive_writes=1)", ["policies"]),
    ("compare victims 'greedy'", "wafer.compare(['base'], victims='greedy', device=dev(), drive_writes=1)",
     ["victims"]),
    ("describe_policy unknown", "wafer.describe_policy('nosuch')", ["nosuch"]),
    ("timing_config unknown", "wafer.timing_config('nosuch')", ["nosuch"]),
    ("kmeans no points", "wafer.kmeans([], k=2)", ["points"]),
    ("kmeans k 0", "wafer.kmeans([[1.0], [2.0]], k=0)", ["k"]),
    ("kmeans nan", "wafer.kmeans([[float('nan')], [1.0]], k=1)", ["finite"]),
    ("kmeans ragged", "wafer.kmeans([[1.0, 2.0], [1.0]], k=1)", ["point 1"]),
    ("kmeans weights", "wafer.kmeans([[1.0], [2.0]], weights=[1.0], k=1)", ["weights"]),
    ("train a rule policy", "wafer.train('base', 'zipf:1.0', out=TMP + '/m.st', device=dev(), drive_writes=1)",
     ["base"]),
    ("train into a missing directory",
     "wafer.train('dogi', 'zipf:1.0', out='/nonexistent/m.st', device=dev(), drive_writes=1)", ["/nonexistent"]),
    ("replay_volumes a string", "wafer.replay_volumes('base', '/nonexistent.csv')", ["traces"]),
    ("replay_volumes a missing file", "wafer.replay_volumes('base', ['/nonexistent.csv'])", ["/nonexistent.csv"]),
]
API_OK = [
    ("a good run", "R()"),
    ("a good trace", "R(trace=GOOD, device=None)"),
    ("compare", "wafer.compare(['base', 'two-r'], 'zipf:1.0', device=dev(), drive_writes=1)"),
]

API_DRIVER = """
import json, sys, wafer
TMP, GOOD = sys.argv[1], sys.argv[2]
D = dict(logical_blocks=65536, segment_blocks=64, op=0.15)
dev = lambda **k: wafer.Device(**{**D, **k})
R = lambda **k: wafer.replay(**{"policy": "base", "workload": "zipf:1.0", "drive_writes": 1, "device": dev(), **k})
T = lambda **k: wafer.replay(**{"policy": "base", "workload": "uniform", "writes": 2000, "timing": "intel750",
                               "fit_device": True, "precondition": 0, **k})
for name, code in json.load(sys.stdin):
    try:
        exec(code)
        out = {"name": name, "raised": None}
    except Exception as e:
        kind = "wafer" if isinstance(e, wafer.WaferError) else type(e).__name__
        if isinstance(e, wafer.InternalError) or type(e).__name__ == "PanicException":
            kind = "panic"
        out = {"name": name, "raised": kind, "message": str(e)[:300]}
    print(json.dumps(out), flush=True)
"""


def api_cases(d: Path, f: dict[str, Path], timeout: float) -> list[dict]:
    """The API class: every statement of :data:`API` and :data:`API_OK` in
    one Python process. Clear: a wafer error, or a ``TypeError`` /
    ``ValueError`` of the call itself, naming what the case names."""
    todo = [(n, c) for n, c, _ in API] + list(API_OK)
    try:
        p = subprocess.run([sys.executable, "-c", API_DRIVER, str(d), str(f["good.csv"])], input=json.dumps(todo),
                           capture_output=True, text=True, timeout=timeout * 4, cwd=d, errors="replace")
        lines, died = p.stdout.splitlines(), p.returncode != 0
    except subprocess.TimeoutExpired as e:
        lines, died = (e.stdout or b"").decode(errors="replace").splitlines(), True
    got = {r["name"]: r for r in map(json.loads, lines)}
    names = {n: w for n, _, w in API}
    rows = []
    for n, _ in todo:
        r = got.get(n)
        if r is None:
            outcome, msg = ("hang" if not died else "signal"), ""
        else:
            msg, raised = r.get("message", ""), r["raised"]
            if n not in names:
                outcome = "ok" if raised is None else "refused-good"
            elif raised is None:
                outcome = "silent-wrong"
            elif raised == "panic":
                outcome = "panic"
            elif raised in ("wafer", "TypeError", "ValueError"):
                outcome = "clear" if all(w in msg for w in names[n]) else "unclear"
            else:
                outcome = "traceback"
        rows.append({"class": "api", "case": n, "outcome": outcome, "rc": None, "message": msg[:160]})
    return rows


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
        for r in api_cases(d, f, timeout):
            rows.append(r)
            if log:
                log(f"{r['outcome']:13} {'api':12} {r['case']}: {r['message']}")
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
