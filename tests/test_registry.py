"""Python asks Rust: the device's fields, the presets, the policy registry and
its composite-name grammar come from the engine (issue 31), and no Python
module re-derives them."""

import ast
import dataclasses
import json
from pathlib import Path

import pytest

import wafer
from wafer import _core, cli
from wafer.api import DEVICE_FIELDS, preset_op, run_config

PACKAGE = Path(wafer.__file__).parent


def test_device_has_every_engine_field_with_its_default():
    fields = {f.name: f for f in dataclasses.fields(wafer.Device)}
    engine = {f["name"]: f for f in DEVICE_FIELDS}
    assert set(engine) <= set(fields), f"missing in wafer.Device: {set(engine) - set(fields)}"
    assert set(fields) - set(engine) == {"capacity", "segment_size"}
    for name, f in engine.items():
        expected = None if name in ("logical_blocks", "segment_blocks", "gc_high", "fit_segments") else f["default"]
        assert fields[name].default == expected, name
        assert f["doc"] and f["type"] in ("int", "float", "bool", "str"), name
        assert f"``{name}``" in wafer.Device.__doc__
    # The config the engine gets has exactly its fields.
    assert set(wafer.Device().to_config()) == set(engine)


def test_every_field_round_trips_through_the_engine():
    """A non-default value of every field reaches the engine's run configuration unchanged."""
    changed = {"physical_blocks": 1 << 15, "op": 0.2, "block_size": 8192, "segment_blocks": 64, "gc_low": 5,
               "gc_high": 6, "gc_low_fraction": 0.05, "gc_high_fraction": 0.06, "background_gc": "idle-gap",
               "background_free_fraction": 0.3, "background_min_invalid": 0.2, "idle_ns": 7, "background_victim_ns": 9,
               "prefill": False, "warmup_drive_writes": 0.5, "window_drive_writes": 0.2, "check_every": 100,
               "gc_mode": "watermark", "gp_threshold": 0.2, "segment_gp_threshold": 0.1,
               "garbage_accounting": "at-seal", "gc_check": "request", "pick_segments": 2, "placement_batch": "block",
               "fit_segments": False,
               "open_streams": 4, "logical_blocks": 1 << 14}
    assert set(changed) == {f["name"] for f in DEVICE_FIELDS}, "every field changed"
    sim = _core.Simulation(json.dumps(run_config("base", device=wafer.Device(**changed), writes=1)))
    assert json.loads(sim.config_json)["device"] == changed


@pytest.mark.parametrize("preset", [p["name"] for p in wafer.presets()])
def test_every_device_preset_constructs_whole(preset):
    p = next(x for x in wafer.presets() if x["name"] == preset)
    d = wafer.Device.preset(preset)
    cfg = d.to_config()
    assert {k: cfg[k] for k in p["config"]} == p["config"], "the preset's whole device, every field"
    for k, v in p["device"].items():
        assert getattr(d, k) == v
    assert wafer.Device.preset(preset, op=0.3).op == 0.3, "overrides win"


@pytest.mark.parametrize("preset", [p["name"] for p in wafer.timing_presets()])
def test_every_timing_preset_constructs(preset):
    t = next(x for x in wafer.timing_presets() if x["name"] == preset)
    assert t["config"] == wafer.timing_config(preset) and t["description"]
    dev = wafer.Device(capacity="2GiB", op=preset_op(t["config"]))
    cfg = run_config("base", device=dev, writes=1 << 10, timing=preset, fit_device=True)
    assert cfg["timing"]["ssd"]["name"] == preset
    _core.Simulation(json.dumps(cfg))


def _device(*args):
    return cli._device(cli.build_parser().parse_args(["replay", *args]))


def test_cli_preset_applies_the_whole_preset_under_explicit_flags():
    d = _device("--preset", "shiro")
    assert (d.gc_low_fraction, d.prefill, d.block_size, d.segment_blocks, d.op) == (0.05, False, 16384, 16384, 0.07)
    d = _device("--preset", "shiro", "--prefill", "--op", "0.1", "--gc-reserve", "8")
    assert (d.prefill, d.op, d.gc_low, d.gc_low_fraction, d.gc_high) == (True, 0.1, 8, None, None)
    assert d.to_config()["gc_high"] == 8, "GC stops no earlier than it starts (the engine settles gc_high)"
    d = _device("--preset", "shiro", "--segment-size", "4MiB")
    assert (d.segment_blocks, d.segment_size) == (None, "4MiB")
    d = _device()
    assert d == wafer.Device(), "no preset, no flags: the defaults"
    assert _device("--no-prefill").prefill is False


def test_cli_replay_with_a_preset_keeps_every_field(capsys):
    """`wafer replay --preset shiro` runs the device Device.preset("shiro") gives (it once dropped
    gc_low_fraction and prefill=false)."""
    size = {"logical_blocks": 4096, "segment_blocks": 32}
    assert cli.main(["replay", "--preset", "shiro", "--logical-blocks", "4096", "--segment-blocks", "32",
                     "--writes", "4096", "--json", "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    api = wafer.replay("base", device=wafer.Device.preset("shiro", **size), writes=4096, victim="cost-benefit")
    assert out["gc"] == api.raw["gc"] and out["conventions"] == api.raw["conventions"]
    assert out["conventions"]["prefill"] is False and out["geometry"]["block_size"] == 16384
    plain = wafer.replay("base", device=wafer.Device(block_size=16384, op=0.07, **size), writes=4096)
    assert plain.raw["gc"] != api.raw["gc"], "gc_low_fraction changes the watermark"


def test_policies_carry_family_and_needs_future():
    ps = wafer.policies()
    assert {p["family"] for p in ps} == {"trivial", "rule-based", "stream", "learned", "oracle"}
    fam = {p["name"]: p["family"] for p in ps}
    assert (fam["base"], fam["fk"], fam["fios"], fam["dogi"], fam["sepbit"]) == (
        "trivial", "oracle", "stream", "learned", "rule-based")
    assert all(p["needs_future"] == (p["family"] == "oracle") for p in ps)


def test_describe_policy_reads_every_composite_form():
    for c in wafer.composites():
        for e in c["examples"]:
            d = wafer.describe_policy(e)
            assert (d["form"], d["family"], d["needs_future"]) == (c["form"], c["family"], c["needs_future"])
    d = wafer.describe_policy("sepbit+nu+ngc")
    assert (d["base"], d["assists"], d["family"], d["needs_future"]) == ("sepbit", ["nu", "ngc"], "oracle", True)
    assert wafer.describe_policy("nodap+ml-dt-user")["predictor"] == "ml-dt"
    assert wafer.describe_policy("dogi+Grp")["stage"] == "grp"
    with pytest.raises(wafer.PolicyError, match="unknown oracle assist"):
        wafer.describe_policy("sepbit+xyz")
    with pytest.raises(wafer.PolicyError, match="unknown policy 'nope'"):
        wafer.describe_policy("nope+nu")


def test_report_family_comes_from_the_registry():
    from wafer.report import family

    assert family("fk") == "oracle", "the review's case: fk was labelled rule-based from its name"
    assert family("fios") == "stream"
    assert family("nodap+sepbit-user") == "oracle-assisted"
    assert family("gone-policy") == "unregistered"


# Patterns that take a policy name apart: none may appear in the package (the engine parses names:
# wafer.describe_policy). Allowed: `wafer tune --other NAME=SPEC+SPEC` (commands/tools.py: workload specs, not policy names).
_ALLOWED = {("tools.py", "rest")}


def _name_parsing(tree: ast.AST, path: Path) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            a = node.args[0]
            arg = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
            target = node.func.value.id if isinstance(node.func.value, ast.Name) else None
            if (node.func.attr in ("split", "partition", "rpartition") and arg == "+"
                    and (path.name, target) not in _ALLOWED) \
                    or (node.func.attr == "startswith" and arg in ("oracle-", "nodap+", "dogi+")) \
                    or (node.func.attr == "endswith" and arg == "-user"):
                found.append(f"{path.name}:{node.lineno}: .{node.func.attr}({arg!r})")
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == "+" \
                and any(isinstance(op, ast.In) for op in node.ops):
            found.append(f"{path.name}:{node.lineno}: '+' in ...")
        if isinstance(node, ast.Name) and node.id == "LEARNED":
            found.append(f"{path.name}:{node.lineno}: LEARNED")
    return found


def test_no_module_parses_a_policy_name():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += _name_parsing(ast.parse(path.read_text()), path)
    assert not found, "parse names with wafer.describe_policy:\n" + "\n".join(found)


def test_the_name_check_finds_what_it_looks_for():
    bad = ast.parse('base, *mods = policy.split("+")\nx = p.startswith("oracle-") or "+" in p\n')
    assert len(_name_parsing(bad, Path("x.py"))) == 3
