"""The stream policies (FIOS, OFIOS, vStream, LSTM+KM, AutoStream) from Python
and the CLI, on a synthetic workload and on a real trace layout."""

import json
import subprocess
import sys

import pytest

import wafer

# Windows in drive-writes so that they fit short runs; a small LSTM.
PARAMS = {
    "fios": {"streams": 4},
    "ofios": {"streams": 4, "window_dw": 0.5},
    "vstream": {"streams": 4, "remap_dw": 0.5},
    "lstm-km": {"streams": 4, "period_dw": 0.1, "chunks": 64, "hidden": 8, "epochs": 2},
    "autostream-pub": {},
}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("s") / "mix.csv"
    subprocess.run([sys.executable, "-m", "wafer", "traces", "sample", str(path), "--workload",
                    "mix:zipf:1.0,size=4,region=0.5+seq,size=32+uniform,size=1", "--requests", "40000"],
                   check=True, capture_output=True, timeout=120)
    return path


@pytest.mark.parametrize("policy", list(PARAMS))
def test_stream_policy_on_a_synthetic_workload_and_a_trace(policy, trace):
    dev = wafer.Device(logical_blocks=1 << 14, op=0.1, segment_blocks=16)
    r = wafer.replay(policy, "mix:zipf:1.0,size=4,region=0.5+seq,size=32+uniform,size=1", device=dev,
                     drive_writes=3, params=PARAMS[policy])
    assert r.steady_waf and r.steady_waf >= 1.0
    t = wafer.replay(policy, trace=trace, params=PARAMS[policy], repeat=2)
    assert t.waf and t.waf >= 1.0


def test_stream_policy_from_the_cli(trace):
    p = subprocess.run([sys.executable, "-m", "wafer", "replay", "--trace", str(trace), "--policy", "ofios",
                        "--param", "window_dw=0.5", "--param", "streams=4", "--repeat", "2", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["policy"] == "ofios" and out["waf"] >= 1.0
    bad = subprocess.run([sys.executable, "-m", "wafer", "replay", "--trace", str(trace), "--policy", "fios",
                          "--param", "streams=0"], capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "streams = 0" in bad.stderr
