"""How the commands print a run's result for people: the summary table, timing rows, numbers."""

from __future__ import annotations

import csv
from typing import Any

from ..result import RunResult


def _print_result(r: RunResult) -> None:
    transient = "  (only the prefill transient: see the warning)" if r.transient else ""
    rows = [
        ("policy / victim", f"{r.policy} / {r.victim}"),
        ("workload", r.workload),
        ("WAF", (f"{r.waf:.4f}" if r.waf else "-") + transient),
        ("steady-state WAF", (f"{r.steady_waf:.4f}" + transient) if r.steady_waf else "- (warm-up not reached)"),
        ("user / GC writes", f"{r.user_writes} / {r.gc_writes} blocks"),
        ("drive-writes", f"{r.drive_writes:.2f} of the {r.raw['geometry']['logical_blocks']}-block device"),
        ("mean victim valid ratio", f"{r.mean_victim_valid_ratio:.3f}" if r.mean_victim_valid_ratio else "-"),
        ("erases per segment", "min {min} / mean {mean:.1f} / max {max}".format(**r.erases)),
        ("groups", ", ".join(f"#{g['group']}: {g['user_writes']}u+{g['gc_writes']}gc, {g['segments']} seg"
                             for g in r.groups)),
        ("speed", f"{r.user_writes_per_second / 1e6:.2f} M user writes/s ({r.elapsed_seconds:.2f} s)"),
    ]
    t = r.raw.get("trace")
    if t:
        truncated = "; TRUNCATED" if t["truncated"] else ""
        passes = f" in {t['passes']} passes" if t["passes"] > 1 else ""
        ext = t.get("extension")
        if ext:
            passes += (f", then {ext['requests']} requests of its continuation ({ext['write_blocks']} of "
                       f"{ext['planned_write_blocks']} blocks planned)")
        rows.insert(2, ("trace", f"{t['format']}: {t['requests']} requests from {t['lines']} lines{passes}; "
                                 f"skipped {t['skipped_bad']} bad, {t['zero_size']} zero-size, {t['filtered']} filtered; "
                                 f"{t['backwards_timestamps']} timestamps raised{truncated}{_load_end(t)}"))
        geo = r.raw["geometry"]
        how = {"footprint": "the trace's footprint, blocks mapped densely",
               "address-space": "the trace's address space",
               "given": ("the preset's whole drive" if r.timing and not r.timing["fit_device"] else "as given")
               + (", the trace's blocks mapped densely inside it" if t.get("remapped") else "")}[t["sizing"]]
        rows.insert(3, ("device", f"{geo['logical_blocks']} logical blocks ({how}; footprint "
                                  f"{t['footprint_blocks']}, address space {t['address_space_blocks']}), "
                                  f"{geo['segments']} segments of {geo['segment_blocks']} blocks, OP {geo['op']:.3f}"))
    for kind, label in (("user", "accuracy (user writes)"), ("gc", "accuracy (GC writes)")):
        rep = (r.accuracy or {}).get(kind)
        if rep:
            rows.append((label, _accuracy_line(rep)))
    ann = r.raw.get("annotation")
    if ann:
        how = "reused" if ann["reused"] else ("cached" if ann["cached"] else "scratch")
        rows.append(("lifetime annotation", f"{ann['writes']} writes, {ann['bytes'] / 2**20:.1f} MiB, {how}, "
                                            f"{ann['seconds']:.2f} s" + (f" ({ann['path']})" if ann["cached"] else "")))
    found = r.raw.get("nodap_search")
    if found:
        rows.append(("nodap search", f"{found['groups']} groups, BIRs {_short(found['birs'])}, "
                                     f"sizes {_short(found['sizes'])}, {found['trials']} trials; {found['stopped']}"))
    tr = r.training
    if tr:
        loss = f", last loss {tr['last_loss']:.3f}" if tr.get("last_loss") is not None else ""
        rows.append(("online training", f"{tr['trainings']} trainings, {tr['seconds']:.2f} s, "
                                        f"{tr['last_examples']} examples last{loss}"))
    conv = r.raw.get("conventions")
    if conv and (conv["setup"] != "wafer" or conv["gc_check"] != "block" or conv["garbage_accounting"] != "immediate"
                 or conv["cost_benefit"] != {"form": "lfs", "clock": "user-writes"} or conv["waf_counts_prefill"]):
        cb = conv["cost_benefit"]
        pick = conv["pick_segments"] or "until clear"
        rows.insert(1, ("conventions", f"setup {conv['setup']}: {conv['gc_mode']} GC checked per {conv['gc_check']}, "
                                       f"victims per check {pick}, garbage {conv['garbage_accounting']}, "
                                       f"prefill {'on' if conv['prefill'] else 'off'}"
                                       f"{' (counted in WAF)' if conv['waf_counts_prefill'] else ''}, "
                                       f"cost-benefit {cb['form']} on {cb['clock']}"))
    for g in r.groups:
        if g.get("victims"):
            life = g.get("mean_lifespan")
            rows.append((f"group {g['group']} GC", f"{g['victims']} victims, mean garbage "
                                                   f"{_fmt_num(g['mean_victim_garbage'])}, {g['user_writes']} user "
                                                   f"+ {g['gc_writes']} GC blocks written, "
                                                   f"{_fmt_num(g['user_write_share'])} of user writes, "
                                                   f"{_fmt_num(g['valid_share'])} of valid blocks, lifespan "
                                                   f"{_fmt_num(life)} user writes"))
    state = r.policy_state
    if state:
        shown = {k: v for k, v in state.items() if v is not None and k != "search"}  # the search has its row
        rows.append(("policy state", ", ".join(f"{k}={_short(v)}" for k, v in shown.items())))
    rows += [(k, v + (transient if k == "timing" else "")) for k, v in _timing_rows(r.timing)]
    for warning in r.warnings:
        rows.append(("warning", warning["message"]))
    if r.error:
        rows.append(("error", r.error))
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{w}}  {v}")


def _lat(s: dict[str, Any]) -> str:
    return (f"mean {s['mean']:.1f}, p50 {s['p50']:.1f}, p90 {s['p90']:.1f}, p99 {s['p99']:.1f}, "
            f"p99.9 {s['p999']:.1f}, p99.99 {s['p9999']:.1f}, max {s['max']:.1f} us ({s['count']})")


def _timing_rows(t: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The table rows of a timed run."""
    if not t:
        return []
    tp, u, h, f, e = t["throughput"], t["utilisation"], t["hits"], t["flash"], t["energy"]
    loop = f" (queue depth {t['queue_depth']})" if t["arrival"] == "closed" else ""

    def rate(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    rows = [
        ("timing", f"{t['preset']} ({'fitted device' if t['fit_device'] else 'whole drive'}), {t['arrival']} "
                   f"arrivals{loop}; {t['simulated_seconds']:.4f} s simulated after {t['precondition_writes']} "
                   f"preconditioning writes ({t['precondition_workload']}, {t['precondition_seconds']:.1f} s"
                   + _pcache_text(t.get("precondition_cache")) + ")"),
        ("throughput", f"{tp['iops']:.0f} IOPS ({tp['read_iops']:.0f} read, {tp['write_iops']:.0f} write), "
                       f"{tp['bandwidth_bytes_per_s'] / 1e6:.1f} MB/s"),
    ]
    for kind in ("read", "write"):
        lat = t[f"{kind}_latency"]
        if lat["device"]["count"]:
            rows.append((f"{kind} latency (device)", _lat(lat["device"])))
            rows.append((f"{kind} latency (end to end)", _lat(lat["end_to_end"])))
    rows += [
        ("utilisation", f"channels mean {u['channel_mean']:.2f} max {u['channel_max']:.2f}; dies mean "
                        f"{u['die_mean']:.2f} min {u['die_min']:.2f} max {u['die_max']:.2f}; host link "
                        f"{max(u['host_link_down'], u['host_link_up']):.2f}; DRAM {u['dram']:.2f}"),
        ("queue waits", f"host queue mean {t['waits']['host_queue_mean_us']:.1f} us; flash mean "
                        + ", ".join(f"{k} {v:.1f}" for k, v in t["waits"]["flash_mean_us"].items()) + " us"),
        ("hit rates", f"cache {rate(h['cache_hit_rate'])}, mapping table {rate(h['cmt_hit_rate'])}"),
        ("flash operations", f"{f['user_programs']} user + {f['gc_programs']} GC + {f['mapping_programs']} mapping "
                             f"programs, {f['reads']} reads ({f['mapping_reads']} mapping), {f['erases']} erases; "
                             f"{f['multiplane_batches']} multi-plane batches; suspended {f['suspended_programs']} "
                             f"programs, {f['suspended_erases']} erases"),
        ("end of run", f"flushed {t['flush']['pages']} dirty pages in {t['flush']['seconds'] * 1e3:.3f} ms "
                       f"({t['flush']['programs']} programs)" if t["flush"] else
                       f"{t['cache']['dirty_pages_at_end']} dirty pages left in the cache (--no-flush)"),
        ("WAF with mapping", f"{rate(t['waf_with_mapping'])} (flash programs / user programs); "
                             f"host WAF {rate(t['host_waf'])} (flash programs / host pages)"),
        ("energy", f"{e['total_j']:.4g} J, {e['average_power_w']:.3f} W average: flash read {e['flash_read_j']:.3g}, "
                   f"program {e['flash_program_j']:.3g}, erase {e['flash_erase_j']:.3g}, idle {e['flash_idle_j']:.3g}, "
                   f"DRAM {e['dram_j']:.3g}, controller {e['controller_j']:.3g} J"),
        ("timing speed", f"{t['requests_per_wall_second'] / 1e6:.3f} M host requests/s, "
                         f"{t['flash_ops_per_wall_second'] / 1e6:.3f} M flash operations/s ({t['wall_seconds']:.2f} s)"),
    ]
    return rows


def _accuracy_line(rep: dict[str, Any]) -> str:
    """One line of a prediction report: accuracy, and P/R/F1 or per-class recall."""
    text = (f"{rep['accuracy']:.3f} of {rep['predictions']} blocks, {rep['classes']} classes "
            f"(always the commonest class: {rep['majority']:.3f}; balanced {rep['balanced_accuracy']:.3f})")
    b = rep.get("binary")
    if b:
        text += f"; short-lived class: precision {_fmt_num(b['precision'])}, recall {_fmt_num(b['recall'])}, " \
                f"F1 {_fmt_num(b['f1'])}"
    else:
        text += "; per-class recall " + " ".join(_fmt_num(c["recall"]) for c in rep["per_class"])
    return text


def _short(v: object) -> str:
    """A policy-state value on one line: floats to 3 decimals, lists compact."""
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list):
        if any(isinstance(x, dict) for x in v):
            return f"[{len(v)} entries; see --json]"
        return "[" + " ".join(_short(x) for x in v) + "]"
    return str(v)


def _write_timeseries(r: RunResult, path: str, groups: bool = False) -> None:
    """The run's time series (``groups``: each group's part of each window) as CSV."""
    ts = r.group_timeseries() if groups else r.timeseries()
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(ts.keys())
        out.writerows(zip(*ts.values()))


def _load_end(read: dict[str, Any]) -> str:
    """A trace's end-of-load marker (MiDAS-Simulation's LOAD_END), as the
    simulator reports it: the writes after it apart."""
    le = read.get("load_end")
    if not le:
        return ""
    return (f"; LOAD_END after {le['requests']} requests ({le['write_bytes'] / 2**20:.1f} MiB written before it; "
            "what follows is the simulator's \"write after load\")")


def _pcache_text(c: dict[str, Any] | None) -> str:
    """How a timed run's preconditioning came about, for its summary row."""
    if not c:
        return ""
    if c["loaded"]:
        return f"; loaded from {c['path']}"
    if c["saved"]:
        return f"; saved to {c['path']} ({c['bytes'] / 2**20:.0f} MiB) for later runs"
    return ""


def _fmt_num(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)
