"""Runtime behaviour seen from Python: the GIL is released while the engine
simulates, and the progress bar draws only when asked and slow enough."""

import io
import json
import threading

import wafer
from wafer import _core
from wafer.progress import Progress


def test_gil_is_released_during_a_step():
    cfg = json.loads(_core.default_config_json())
    cfg.update(workload="uniform", writes=6 << 20)
    cfg["device"].update(logical_blocks=1 << 18, prefill=False)
    sim = _core.Simulation(json.dumps(cfg))
    started, done = threading.Event(), threading.Event()

    errors = []

    def work():
        started.set()
        try:
            sim.step(6 << 20)  # one call, seconds long
        except Exception as e:  # surfaced below
            errors.append(e)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while not done.is_set() and t.is_alive():
        spins += 1
    t.join()
    assert not errors, errors
    assert sim.written == 6 << 20
    # With the GIL held for the whole step, this thread could not spin at all
    # until the step returned.
    assert spins > 10_000, spins


def test_progress_draws_only_after_the_delay():
    out = io.StringIO()
    p = Progress(100, "x", enabled=True, delay=0.0, stream=out)
    p.last = -1.0
    p.update(50)
    p.close()
    assert "50.0%" in out.getvalue() and out.getvalue().endswith("\n")
    quiet = io.StringIO()
    p = Progress(100, "x", enabled=True, delay=60.0, stream=quiet)
    p.update(50)
    p.close()
    assert quiet.getvalue() == ""


def test_off_a_terminal_progress_is_a_line_per_job_or_per_interval(monkeypatch):
    import wafer.progress as progress

    out = io.StringIO()  # not a terminal
    monkeypatch.setattr(progress.sys, "stderr", out)
    jobs = Progress(3, "sweep", enabled=True, unit="jobs")
    assert jobs.lines
    jobs.start -= 10  # past the delay
    jobs.update(1)
    jobs.update(1)  # nothing new finished: no line
    jobs.update(2)
    jobs.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("sweep: 1/3 jobs (33%)") and "ETA" in lines[0], lines
    assert lines[1].startswith("sweep: 2/3 jobs (67%)") and lines[2].startswith("sweep: done in"), lines
    assert "\r" not in out.getvalue()
    # A replay's blocks: the first line after the delay, then one per LINE_SECONDS.
    out.seek(0)
    out.truncate()
    blocks = Progress(1000, "base/greedy", enabled=True)
    blocks.start -= 10
    for done in (100, 200, 300):
        blocks.update(done)
    assert out.getvalue().count("\n") == 1 and "100/1.0k blocks" in out.getvalue(), out.getvalue()
    blocks.last -= progress.LINE_SECONDS
    blocks.update(400)
    assert out.getvalue().count("\n") == 2
    # --quiet
    out.seek(0)
    out.truncate()
    off = Progress(3, "sweep", enabled=False, unit="jobs")
    off.start -= 10
    off.update(1)
    off.close()
    assert out.getvalue() == ""


def test_replay_progress_is_quiet_off_a_terminal_for_a_short_run(capsys):
    wafer.replay("base", "uniform", device=wafer.Device(logical_blocks=4096, segment_blocks=32), writes=20_000,
                 progress=True)
    assert capsys.readouterr().err == ""
