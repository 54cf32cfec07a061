"""Speed is measured by `wafer bench` (docs/PERFORMANCE.md), not asserted in
timed tests. This marked test only checks the benchmark runs; `pytest -m
benchmark` to run it."""

import json
import subprocess
import sys

import pytest


@pytest.mark.benchmark
def test_bench_quick_runs():
    p = subprocess.run([sys.executable, "-m", "wafer", "bench", "--quick", "--repeat", "1", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["engine"][0]["user_writes_per_second_best"] > 0
    names = [k["kernel"] for k in out["kernels"]]
    assert any(n.startswith("MLP") for n in names) and all(k["ns_per_call"] > 0 for k in out["kernels"])
    assert {p["policy"] for p in out["policies"]} >= {"nodap", "oracle-sort"}
    learned = {e["policy"]: e for e in out["learned"]}
    assert set(learned) == {"dogi", "phftl", "ml-dt"}
    assert all(e["trainings"] > 0 and e["frozen_user_writes_per_second"] > 0 for e in learned.values())
