"""One run vocabulary: every run field (``wafer.RUN_FIELDS``, the engine's
table) set through the CLI, through the Python API and by a program that
gives the engine JSON settles to the same run configuration."""

import json

import pytest

import wafer
from wafer import _core
from wafer.cli import main


def _trace(tmp_path):
    p = tmp_path / "t.csv"
    rows = [f"{128166372000000000 + i * 10000},hm,0,{'Read' if i % 5 == 4 else 'Write'},{(i * 37 % 200) * 4096},"
            f"{4096 * (1 + i % 3)},10" for i in range(3000)]
    p.write_text("\n".join(rows) + "\n")
    return str(p)


def _cases(t):
    """field -> (CLI flags, API keywords, the JSON a program gives the engine)."""
    femu = {"timing": "femu"}
    return {
        "policy": (["--policy", "sepbit"], {"policy": "sepbit"}, {"policy": "sepbit"}),
        "workload": (["--workload", "uniform"], {"workload": "uniform"}, {"workload": "uniform"}),
        "params": (["--policy", "sepbit", "--param", "classes=4"], {"policy": "sepbit", "params": {"classes": 4}},
                   {"policy": "sepbit", "params": {"classes": 4}}),
        "victim": (["--victim", "cost-benefit"], {"victim": "cost-benefit"}, {"victim": "cost-benefit"}),
        "seed": (["--seed", "7"], {"seed": 7}, {"seed": 7}),
        "writes": (["--writes", "5000"], {"writes": 5000}, {"writes": 5000}),
        "drive_writes": (["--drive-writes", "2.5"], {"drive_writes": 2.5}, {"drive_writes": 2.5}),
        "accuracy": (["--accuracy"], {"accuracy": True}, {"accuracy": True}),
        "cache_dir": (["--cache-dir", "/tmp/c"], {"cache_dir": "/tmp/c"}, {"cache_dir": "/tmp/c"}),
        "memory_limit": (["--memory-limit", "8GiB"], {"memory_limit": "8GiB"}, {"memory_limit": "8GiB"}),
        "dump_gc": (["--dump-gc", "/tmp/gc.csv"], {"dump_gc": "/tmp/gc.csv"}, {"dump_gc": "/tmp/gc.csv"}),
        "trace": (["--trace", t], {"trace": t}, {"trace": t}),
        "format": (["--trace", t, "--format", "msr"], {"trace": t, "format": "msr"}, {"trace": t, "format": "msr"}),
        "selection": (["--trace", t, "--max-requests", "10", "--drop-reads"],
                      {"trace": t, "selection": wafer.Selection(max_requests=10, drop_reads=True)},
                      {"trace": t, "selection": {"max_requests": 10, "drop_reads": True}}),
        "remap": (["--trace", t, "--capacity", "1GiB", "--remap"],
                  {"trace": t, "device": wafer.Device(capacity="1GiB"), "remap": True},
                  {"trace": t, "device": {"capacity": "1GiB"}, "remap": True}),
        "address_space": (["--trace", t, "--address-space"], {"trace": t, "address_space": True},
                          {"trace": t, "address_space": True}),
        "repeat": (["--trace", t, "--repeat", "2"], {"trace": t, "repeat": 2}, {"trace": t, "repeat": 2}),
        "extend": (["--trace", t, "--extend", "3"], {"trace": t, "extend": 3}, {"trace": t, "extend": 3.0}),
        "device": (["--capacity", "1GiB", "--op", "0.2", "--segment-size", "1MiB"],
                   {"device": wafer.Device(capacity="1GiB", op=0.2, segment_size="1MiB")},
                   {"device": {"capacity": 1 << 30, "op": 0.2, "segment_size": "1MiB"}}),
        "setup": (["--setup", "midas-sim"], {"setup": "midas-sim"}, {"setup": "midas-sim"}),
        "cost_benefit": (["--cost-benefit", "sqrt"], {"cost_benefit": "sqrt"}, {"cost_benefit": "sqrt"}),
        "cost_benefit_clock": (["--cost-benefit-clock", "trace-time"], {"cost_benefit_clock": "trace-time"},
                               {"cost_benefit_clock": "trace-time"}),
        "waf_counts_prefill": (["--waf-counts-prefill"], {"waf_counts_prefill": True}, {"waf_counts_prefill": True}),
        "timing": (["--timing", "femu"], femu, femu),
        "arrival": (["--timing", "femu", "--arrival", "afap"], {**femu, "arrival": "afap"},
                    {**femu, "arrival": "afap"}),
        "queue_depth": (["--timing", "femu", "--queue-depth", "4"], {**femu, "queue_depth": 4},
                        {**femu, "queue_depth": 4}),
        "think_ns": (["--timing", "femu", "--think-us", "2.5"], {**femu, "think_ns": 2500},
                     {**femu, "think_ns": 2500}),
        "precondition": (["--timing", "femu", "--precondition", "0.5"], {**femu, "precondition": 0.5},
                         {**femu, "precondition": 0.5}),
        "precondition_workload": (["--timing", "femu", "--precondition-workload", "zipf:0.9"],
                                  {**femu, "precondition_workload": "zipf:0.9"},
                                  {**femu, "precondition_workload": "zipf:0.9"}),
        "fit_device": (["--timing", "femu", "--fit-device", "--capacity", "64MiB"],
                       {**femu, "fit_device": True, "device": wafer.Device(capacity="64MiB")},
                       {**femu, "fit_device": True, "device": {"capacity": "64MiB"}}),
        "flush": (["--timing", "femu", "--no-flush"], {**femu, "flush": False}, {**femu, "flush": False}),
        "precondition_cache": (["--timing", "femu", "--precondition-cache", "/tmp/pc"],
                               {**femu, "precondition_cache": "/tmp/pc"}, {**femu, "precondition_cache": "/tmp/pc"}),
    }


def _cli_config(capsys, flags):
    assert main(["replay", *flags, "--show-config"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_field_settles_the_same_from_cli_api_and_json(tmp_path, capsys):
    t = _trace(tmp_path)
    cases = _cases(t)
    # A new run field needs a case here (and so a flag, a keyword and a JSON spelling).
    assert set(cases) == {f["name"] for f in wafer.RUN_FIELDS}
    default = json.loads(_core.settle_run("{}"))
    for name, (flags, kw, spec) in cases.items():
        kw = dict(kw)
        policy, workload = kw.pop("policy", "base"), kw.pop("workload", wafer.api.DEFAULT_WORKLOAD)
        api = wafer.api.run_config(policy, workload, **kw)
        assert _cli_config(capsys, flags) == api, name
        assert json.loads(_core.settle_run(json.dumps(spec))) == api, name
        assert api != default, f"{name}: the case changes nothing"


def test_the_rules_live_in_the_engine(tmp_path):
    t = _trace(tmp_path)
    settle = lambda **s: json.loads(_core.settle_run(json.dumps(s)))  # noqa: E731
    # A trace's arrival is its timestamps; a workload's a closed loop.
    assert settle(timing="femu", trace=t)["timing"]["arrival"] == "trace"
    assert settle(timing="femu")["timing"]["arrival"] == "closed"
    # A workload runs 4 drive-writes; a trace all of it.
    assert settle(device={"logical_blocks": 1000})["writes"] == 4000
    assert settle(trace=t)["writes"] == 1 << 63
    # The replayer keeps a trace's addresses; a small footprint gets fitted segments.
    assert settle(trace=t, setup="sepbit-replayer")["trace"]["address_space"] is True
    assert settle(trace=t)["device"]["fit_segments"] is True
    # A timed run's block is the preset's page; its op the preset's.
    ssd = wafer.timing_config("femu")
    c = settle(timing="femu")
    assert c["device"]["block_size"] == ssd["flash"]["page_bytes"]
    assert c["device"]["op"] == pytest.approx(wafer.api.preset_op(ssd))
    # Capacity in bytes counts the timed run's pages.
    c = settle(timing="femu", fit_device=True, device={"capacity": "64MiB"})
    assert c["device"]["logical_blocks"] == (64 << 20) // ssd["flash"]["page_bytes"]


@pytest.mark.parametrize("spec, field", [
    ({"timing": "femu", "device": {"capacity": "1GiB"}}, "capacity"),
    ({"timing": "femu", "device": {"op": 0.5}}, "op"),
    ({"timing": "femu", "device": {"segment_size": "1MiB"}}, "segment_size"),
    ({"queue_depth": 4}, "timing.queue_depth"),
    ({"setup": "midas-sim", "cost_benefit": "lfs"}, "cost_benefit"),
    ({"setup": "midas-sim", "device": {"prefill": False}}, "prefill"),
    ({"writes": 10, "drive_writes": 1}, "drive_writes"),
    ({"repeat": 2}, "repeat"),
    ({"device": {"capacity": "1GiB", "logical_blocks": 5}}, "capacity"),
    ({"seed": 1.5}, "seed"),
    ({"sede": 1}, "sede"),
])
def test_a_bad_spec_is_refused_naming_the_field(spec, field):
    with pytest.raises(wafer.ConfigError, match=f"configuration: {field}"):
        _core.settle_run(json.dumps(spec))


def test_the_cli_names_the_flag_of_a_refused_field(capsys):
    assert main(["replay", "--timing", "femu", "--capacity", "1GiB", "--show-config"]) == 2
    assert "--capacity (capacity): a timed run uses the preset's whole drive" in capsys.readouterr().err
    assert main(["replay", "--setup", "midas-sim", "--cost-benefit", "lfs", "--show-config"]) == 2
    assert "--cost-benefit (cost_benefit): setup midas-sim fixes" in capsys.readouterr().err
    assert main(["replay", "--queue-depth", "4", "--show-config"]) == 2
    assert "--queue-depth (timing.queue_depth): only with timing" in capsys.readouterr().err


def test_a_json_caller_gets_the_clis_run(tmp_path, capsys):
    t = _trace(tmp_path)
    flags = ["--trace", t, "--setup", "sepbit-replayer", "--policy", "sepbit", "--json", "-q"]
    assert main(["replay", *flags]) == 0
    cli = json.loads(capsys.readouterr().out)
    sim = _core.Simulation(_core.settle_run(json.dumps({"trace": t, "setup": "sepbit-replayer",
                                                        "policy": "sepbit"})))
    while not sim.step(1 << 20):
        pass
    direct = json.loads(sim.result_json())
    for k in ("waf", "user_writes", "gc_writes"):
        assert direct[k] == cli[k], k


def test_the_engine_refuses_a_size_a_whole_drive_would_overwrite():
    cfg = json.loads(_core.settle_run(json.dumps({"timing": "femu", "precondition": 0})))
    cfg["device"]["logical_blocks"] = 5000
    with pytest.raises(wafer.ConfigError, match="logical_blocks: a timed run uses the preset's whole drive"):
        _core.Simulation(json.dumps(cfg))


def test_replay_takes_run_fields_by_name_or_as_a_run(small):
    with pytest.raises(wafer.ConfigError, match="sede: no such run field; known: .*seed"):
        wafer.replay("base", sede=2)
    a = wafer.replay("base", device=small, run=wafer.Run(seed=3, writes=20000))
    b = wafer.replay("base", device=small, seed=3, writes=20000)
    assert a.waf == b.waf and a.user_writes == 20000
    with pytest.raises(wafer.ConfigError, match="seed: given in run= and as a keyword"):
        wafer.replay("base", device=small, run=wafer.Run(seed=3), seed=4)
    assert "queue_depth" in wafer.Run.__doc__


def test_every_device_field_has_a_flag_that_settles_as_the_api_does(capsys):
    """A device field added to the engine's table reaches the CLI (a generic flag when none is written by
    hand), and the CLI, the API and a JSON caller settle it the same."""
    from wafer.cli import build_parser

    dests = {a.dest for a in build_parser()._subparsers._group_actions[0].choices["replay"]._actions}
    assert {f["name"] for f in wafer.DEVICE_FIELDS} <= dests
    flags = ["--background-gc", "idle-gap", "--gc-low-fraction", "0.05", "--gc-high-fraction", "0.1",
             "--placement-batch", "block", "--idle-ns", "5000000", "--no-fit-segments"]
    given = {"background_gc": "idle-gap", "gc_low_fraction": 0.05, "gc_high_fraction": 0.1,
             "placement_batch": "block", "idle_ns": 5_000_000, "fit_segments": False}
    api = wafer.api.run_config("base", device=wafer.Device(**given))
    assert _cli_config(capsys, flags) == api
    assert json.loads(_core.settle_run(json.dumps({"device": given}))) == api
    assert api["device"]["background_gc"] == "idle-gap" and api["device"]["placement_batch"] == "block"


def test_a_new_run_field_needs_no_python(monkeypatch, capsys):
    """A run field the CLI has no hand-written flag for gets one from the table, and its value reaches the
    engine's spec by name (here a field the engine does not know yet, so the engine refuses it by name)."""
    from wafer import cli

    row = {"name": "new_knob", "type": "int", "unit": "widgets", "choices": [], "default": 3, "doc": "a knob",
           "flag": "--new-knob", "group": "run"}
    monkeypatch.setitem(wafer.api._RUN_FIELD, "new_knob", row)
    a = cli.build_parser().parse_args(["replay", "--new-knob", "7"])
    assert cli._timing_kwargs(a)["new_knob"] == 7
    assert "a knob [widgets] (default 3)" in cli.build_parser()._subparsers._group_actions[0] \
        .choices["replay"].format_help().replace("\n", " ").replace("  ", " ")
    assert main(["replay", "--new-knob", "7", "--show-config"]) == 2
    assert "new_knob" in capsys.readouterr().err


def test_gc_stops_no_earlier_than_it_starts_everywhere(capsys):
    """gc_high not given is gc_low when that is larger: the engine's rule, so the API, the CLI and a JSON
    caller agree (the API refused Device(gc_low=10) before; the CLI alone raised gc_high)."""
    api = wafer.api.run_config("base", device=wafer.Device(gc_low=10))
    assert api["device"]["gc_high"] == 10
    assert _cli_config(capsys, ["--gc-reserve", "10"]) == api
    assert json.loads(_core.settle_run(json.dumps({"device": {"gc_low": 10}}))) == api
    assert wafer.Device(gc_low=10).to_config()["gc_high"] == 10
    assert wafer.api.run_config("base", device=wafer.Device(gc_low=2, gc_high=6))["device"]["gc_high"] == 6
    with pytest.raises(wafer.ConfigError, match="gc_high"):
        wafer.Device(gc_low=10, gc_high=6)


@pytest.mark.parametrize("device, field", [({"prefill": False}, "prefill"),
                                           ({"warmup_drive_writes": 2.0}, "warmup_drive_writes")])
def test_a_timed_run_refuses_the_warm_up_it_would_replace(device, field, capsys):
    with pytest.raises(wafer.ConfigError, match=f"{field}: does not apply to a timed run"):
        _core.settle_run(json.dumps({"timing": "femu", "device": device}))
    # The default given explicitly changes nothing.
    _core.settle_run(json.dumps({"timing": "femu", "device": {"prefill": True, "warmup_drive_writes": 1.0}}))
    flag = "--no-prefill" if field == "prefill" else "--warmup-drive-writes"
    assert main(["replay", "--timing", "femu", flag, *(["2"] if field != "prefill" else []), "--show-config"]) == 2
    assert f"({field}): does not apply to a timed run" in capsys.readouterr().err


def test_a_setup_refuses_a_placement_batch_it_fixes_otherwise():
    with pytest.raises(wafer.ConfigError, match="placement_batch: setup sepbit-replayer fixes"):
        _core.settle_run(json.dumps({"setup": "sepbit-replayer", "device": {"placement_batch": "request"}}))


def test_a_given_fit_segments_is_kept(tmp_path):
    t = _trace(tmp_path)
    assert json.loads(_core.settle_run(json.dumps({"trace": t})))["device"]["fit_segments"] is True
    c = json.loads(_core.settle_run(json.dumps({"trace": t, "device": {"fit_segments": False}})))
    assert c["device"]["fit_segments"] is False


@pytest.mark.parametrize("kw, field", [({"writes": 100}, "writes"), ({"drive_writes": 1.0}, "drive_writes"),
                                       ({"repeat": 2}, "repeat"), ({"extend": 2.0}, "extend"),
                                       ({"accuracy": True}, "accuracy"), ({"timing": "femu"}, "timing"),
                                       ({"dump_gc": "/tmp/gc.csv"}, "dump_gc")])
def test_a_multi_volume_run_refuses_what_it_would_leave_unused(tmp_path, kw, field, capsys):
    """Every volume's trace is replayed whole, once, untimed: in the engine, so the API, the CLI and a JSON
    caller of MultiSimulation are all refused by name (the API ignored them before)."""
    t = _trace(tmp_path)
    with pytest.raises(wafer.ConfigError, match=f"configuration: {field}: a multi-volume run"):
        wafer.replay_volumes("base", [t, t], **kw)
    flags = {"writes": ["--writes", "100"], "drive_writes": ["--drive-writes", "1"], "repeat": ["--repeat", "2"],
             "extend": ["--extend", "2"], "accuracy": ["--accuracy"], "timing": ["--timing", "femu"],
             "dump_gc": ["--dump-gc", "/tmp/gc.csv"]}[field]
    assert main(["replay", "--trace", t, "--trace", t, *flags, "-q"]) == 2
    assert f"({field}): a multi-volume run" in capsys.readouterr().err
    run = json.loads(_core.settle_run(json.dumps({"trace": t, **kw})))
    with pytest.raises(wafer.ConfigError, match=f"{field}: a multi-volume run"):
        _core.MultiSimulation(json.dumps({"run": run, "volumes": [run["trace"], run["trace"]]}))


def test_dump_gc_writes_one_row_per_victim(tmp_path, capsys):
    """--dump-gc: a generic flag from the engine's table; one row per collected victim, CSV or Arrow."""
    import csv

    import pyarrow.ipc

    t = _trace(tmp_path)
    flags = ["--trace", t, "--policy", "sepbit", "--repeat", "4", "--segment-blocks", "4", "--op", "0.5", "--json", "-q"]
    assert main(["replay", *flags, "--dump-gc", str(tmp_path / "gc.csv"),
                 "--group-timeseries", str(tmp_path / "groups.csv")]) == 0
    r = json.loads(capsys.readouterr().out)
    victims = sum(g["victims"] for g in r["groups"])
    per_group = list(csv.DictReader(open(tmp_path / "groups.csv")))
    assert sum(int(x["victims"]) for x in per_group) == victims
    rows = list(csv.DictReader(open(tmp_path / "gc.csv")))
    assert victims > 0 and len(rows) == victims
    assert [int(x["victim"]) for x in rows] == list(range(victims))
    for x in rows:
        assert int(x["valid"]) + int(x["invalid"]) == int(x["blocks"])
        assert int(x["age_writes"]) == int(x["user_writes"]) - int(x["seal_time"])
    assert main(["replay", *flags, "--dump-gc", str(tmp_path / "gc.arrow")]) == 0
    capsys.readouterr()
    table = pyarrow.ipc.open_file(tmp_path / "gc.arrow").read_all()
    assert table.num_rows == victims and table.column("segment").to_pylist() == [int(x["segment"]) for x in rows]
    # A run that fails before its workload starts leaves the last dump as it was, and no part file.
    before = (tmp_path / "gc.csv").read_bytes()
    assert main(["replay", "--trace", t, "--op", "0.01", "--dump-gc", str(tmp_path / "gc.csv"), "-q"]) == 2
    capsys.readouterr()
    assert (tmp_path / "gc.csv").read_bytes() == before and not (tmp_path / "gc.csv.part").exists()
    # Bad input: an unwritable file is refused before the run, naming the flag; compare and checkpoints refuse it.
    assert main(["replay", *flags, "--dump-gc", str(tmp_path / "no" / "gc.csv")]) == 2
    assert "--dump-gc (dump_gc)" in capsys.readouterr().err
    with pytest.raises(wafer.ConfigError, match="dump_gc: one file per run"):
        wafer.compare(["base", "sepbit"], trace=t, dump_gc=str(tmp_path / "x.csv"))
    with pytest.raises(wafer.WaferError, match="dump_gc"):
        wafer.replay("base", trace=t, repeat=4, device=wafer.Device(segment_blocks=4, op=0.5),
                     dump_gc=str(tmp_path / "y.csv"),
                     checkpoint=str(tmp_path / "run.ckpt"), checkpoint_every=0.5)


def test_review_mends(tmp_path, capsys):
    """compare keeps its own --policies/--victims (no generic --victim/--policy/--param); a Device's
    fit_segments=False reaches the engine; dump_gc with a checkpoint is refused before the run; a
    multi-volume run refuses a time series; --all-devices refuses per-run fields before splitting."""
    from wafer.cli import build_parser

    cmp = build_parser()._subparsers._group_actions[0].choices["compare"]
    assert cmp.parse_args(["--victim", "fifo"]).victims == "fifo", "still the abbreviation of --victims"
    assert "--param" not in cmp._option_string_actions or cmp._option_string_actions["--param"].dest == "param"
    t = _trace(tmp_path)
    assert json.loads(_core.settle_run(json.dumps({"trace": t})))["device"]["fit_segments"] is True
    off = wafer.api.run_config("base", trace=t, device=wafer.Device(fit_segments=False))
    assert off["device"]["fit_segments"] is False
    with pytest.raises(wafer.CheckpointError, match="dump_gc"):
        wafer.replay("base", trace=t, dump_gc=str(tmp_path / "g.csv"), checkpoint=str(tmp_path / "c.ckpt"))
    assert not (tmp_path / "g.csv").exists()
    assert main(["replay", "--trace", t, "--trace", t, "--timeseries", str(tmp_path / "ts.csv"), "-q"]) == 2
    assert "timeseries" in capsys.readouterr().err
    with pytest.raises(wafer.ConfigError, match="accuracy: a multi-volume run"):
        wafer.replay_volumes("base", all_devices=t, accuracy=True, cache_dir=str(tmp_path / "cache"))
    assert not (tmp_path / "cache" / "split").exists(), "refused before the split"
