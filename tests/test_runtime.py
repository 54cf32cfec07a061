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


def test_replay_progress_flag_is_quiet_off_a_terminal(capsys):
    wafer.replay("base", "uniform", device=wafer.Device(logical_blocks=4096, segment_blocks=32), writes=20_000,
                 progress=True)
    assert capsys.readouterr().err == ""
