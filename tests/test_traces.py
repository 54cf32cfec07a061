"""Traces from Python and the CLI: inspect, convert, replay, errors."""

import gzip
import json
import subprocess
import sys

import pytest

import wafer
from wafer import traces

MSR = (
    "128166372003061629,hm,0,Read,3154137088,4096,12527\n"
    "128166372016382155,hm,0,Write,3154137088,4096,1120\n"
    "128166372026382245,hm,0,Write,1229639680,32768,2102\n"
)


def cli(*args, ok=True):
    p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture
def msr(tmp_path):
    p = tmp_path / "hm_0.csv"
    p.write_text(MSR)
    return p


@pytest.fixture
def cyclic(tmp_path):
    """2000 writes over 64 blocks of 4 KiB in sparse places, plus reads (Alibaba layout, gzip)."""
    lines = []
    for i in range(3000):
        op = "R" if i % 3 == 2 else "W"
        lines.append(f"5,{op},{(i * 7 % 64) * (1 << 20)},4096,{1_600_000_000_000_000 + i * 1000}")
    p = tmp_path / "ali.csv.gz"
    p.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return p


def test_formats_listed():
    names = {f["name"] for f in traces.formats()}
    assert {"msr", "alibaba", "tencent", "spc", "fiu", "blkparse", "mqsim", "disksim", "ssdsim", "native"} <= names


def test_inspect(msr):
    st = traces.inspect(msr)
    assert (st.requests, st.reads, st.writes) == (3, 1, 2)
    assert st.format == "msr"
    assert st.write_blocks == 1 + 8
    assert st.fios["avg_write_kib"] == pytest.approx(18.0)


def test_replay_trace_sized_from_footprint(cyclic):
    r = wafer.replay("two-r", trace=cyclic, device=wafer.Device(op=0.5, segment_blocks=4), remap=True)
    assert r.raw["trace_format"] == "alibaba"
    assert r.raw["geometry"]["logical_blocks"] == 64
    assert r.user_writes == 2000
    assert r.raw["counters"]["read_blocks"] == 1000
    # a workload argument naming a file is a trace too
    r2 = wafer.replay("two-r", str(cyclic), device=wafer.Device(op=0.5, segment_blocks=4), remap=True)
    assert r2.gc_writes == r.gc_writes


def test_selection_limits_the_replay(cyclic):
    sel = wafer.Selection(max_requests=300, drop_reads=True)
    r = wafer.replay("base", trace=cyclic, selection=sel, device=wafer.Device(op=0.5, segment_blocks=4), remap=True)
    assert r.user_writes == 300 and r.raw["trace"]["requests"] == 300


def test_bad_line_is_a_trace_error_naming_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text(MSR + "128166372026382246,hm,0,Write,12,abc,1\n")
    with pytest.raises(wafer.TraceError, match=r"bad.csv:4: size 'abc' is not an unsigned integer"):
        wafer.replay("base", trace=p, format="msr", device=wafer.Device(op=3.0, segment_blocks=4))
    r = wafer.replay("base", trace=p, format="msr", selection=wafer.Selection(skip_bad=True),
                     device=wafer.Device(op=3.0, segment_blocks=4))
    assert r.raw["trace"]["skipped_bad"] == 1


def test_unknown_format_lists_known(msr):
    with pytest.raises(wafer.PolicyError, match="unknown trace format 'msrc'; known: msr, alibaba"):
        traces.inspect(msr, "msrc")


def test_convert_then_replay_gives_the_same_result(cyclic, tmp_path):
    out = tmp_path / "t.arrow"
    st = traces.convert(cyclic, out)
    assert st["requests"] == 3000
    assert traces.detect(out) == "native"
    dev = wafer.Device(op=0.5, segment_blocks=4)
    a = wafer.replay("two-r", trace=cyclic, device=dev, remap=True)
    b = wafer.replay("two-r", trace=out, device=dev, remap=True)
    assert (a.user_writes, a.gc_writes) == (b.user_writes, b.gc_writes)
    pa = pytest.importorskip("pyarrow")
    t = pa.ipc.open_file(str(out)).read_all()
    assert t.num_rows == 3000 and t.schema.names == ["time_ns", "device", "op", "offset", "size"]


def test_cli_inspect_json_and_convert(cyclic, tmp_path):
    d = json.loads(cli("traces", "inspect", str(cyclic), "--json").stdout)
    assert d["requests"] == 3000 and d["writes"] == 2000
    human = cli("traces", "inspect", str(cyclic)).stdout
    assert "FIOS attributes" in human and "update intervals" in human
    out = tmp_path / "c.arrow"
    assert "3000 requests" in cli("traces", "convert", str(cyclic), str(out)).stdout
    r = json.loads(cli("replay", "--trace", str(out), "--remap", "--op", "0.5", "--segment-blocks", "4",
                       "--json").stdout)
    assert r["user_writes"] == 2000 and r["trace"]["requests"] == 3000


def test_a_native_trace_edited_after_conversion_is_refused(cyclic, tmp_path):
    # Issue 42: the footer's checksum of the rows is checked on open.
    out = tmp_path / "c.arrow"
    traces.convert(cyclic, out)
    data = bytearray(out.read_bytes())
    value = (11 * 7 % 64 * (1 << 20)).to_bytes(8, "little")  # an offset in the file
    at = data.index(value)
    data[at + 2] ^= 0x01
    bad = tmp_path / "edited.arrow"
    bad.write_bytes(bytes(data))
    p = cli("replay", "--trace", str(bad), "--remap", "--op", "0.5", "--segment-blocks", "4", ok=False)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "edited.arrow" in p.stderr and "corrupt" in p.stderr, p.stderr
    with pytest.raises(wafer.TraceError, match="edited.arrow.*corrupt"):
        traces.inspect(bad)


def test_cli_trace_errors_are_clear(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("1,hm,0,Write,-4096,4096,1\n")
    e = cli("replay", "--trace", str(p), "--format", "msr", ok=False)
    assert e.returncode == 2 and "x.csv:1: negative offset" in e.stderr and "Traceback" not in e.stderr
    e = cli("traces", "inspect", str(tmp_path / "missing.csv"), ok=False)
    assert e.returncode == 2 and "cannot open" in e.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    e = cli("traces", "inspect", str(empty), ok=False)
    assert "empty file" in e.stderr


@pytest.fixture
def short(tmp_path):
    """A short MSR trace as a day of a volume looks: skewed writes to 30% of the space, reads of the rest;
    under half a drive-write of its footprint."""
    p = tmp_path / "hm_short.csv"
    traces.sample(str(p), "mix:zipf:0.8,size=1-8,region=0.3+uniform,reads=1.0,size=8,region=0.7", requests=3000,
                  logical_blocks=1 << 16)
    return p


def test_extend_keeps_the_footprint_and_ends_the_repeat_warning(short, tmp_path):
    out = tmp_path / "long.arrow"
    w = json.loads(cli("traces", "extend", str(short), "--drive-writes", "4", "-o", str(out), "--json").stdout)
    assert w["format"] == "msr" and w["trace_drive_writes"] < 1 and w["drive_writes"] == pytest.approx(4, abs=0.01)
    assert "drive-writes in all" in cli("traces", "extend", str(short), "--drive-writes", "2", "-o", str(out)).stdout
    assert traces.inspect(str(out)).footprint_blocks == traces.inspect(str(short)).footprint_blocks
    dev = wafer.Device(op=0.25)
    ext = wafer.replay("sepbit", trace=short, extend=4, device=dev)
    assert ext.drive_writes == pytest.approx(4, abs=0.01)
    assert ext.raw["trace"]["extension"]["requests"] > 0
    codes = {w["code"] for w in ext.warnings}
    assert "periodic-repeat" not in codes and "trace-shorter-than-asked" not in codes
    rep = wafer.replay("sepbit", trace=short, repeat=8, device=dev)
    assert "periodic-repeat" in {w["code"] for w in rep.warnings}
    # --drive-writes past the trace's end says so, and names --extend
    r = json.loads(cli("replay", "--trace", str(short), "--drive-writes", "4", "--json", "-q").stdout)
    (w,) = [w for w in r["warnings"] if w["code"] == "trace-shorter-than-asked"]
    assert "--extend 4.00" in w["message"]
    assert all("size the device smaller" not in w["message"] for w in r["warnings"])
    e = cli("replay", "--trace", str(short), "--extend", "4", "--repeat", "2", ok=False)
    assert e.returncode == 2 and "repeat or extend" in e.stderr


def test_extend_too_large_for_the_disk_is_refused_and_writes_nothing(short, tmp_path):
    """Review wave 3: `--drive-writes 1e6` wrote 12 GB in a minute and left a cut file under the output
    name. The file's size is estimated first and refused past the disk's free space, naming the flag; a
    written file appears only whole (written as OUT.part and renamed)."""
    out = tmp_path / "huge.arrow"
    e = cli("traces", "extend", str(short), "--drive-writes", "1e9", "-o", str(out), ok=False)
    assert e.returncode == 2 and "--drive-writes" in e.stderr and "GB free" in e.stderr, e.stderr
    assert "Traceback" not in e.stderr and list(tmp_path.glob("huge.arrow*")) == []
    cli("traces", "extend", str(short), "--drive-writes", "2", "-o", str(out))
    assert out.exists() and list(tmp_path.glob("*.part")) == []


@pytest.mark.parametrize("flag", [["--extend", "2"], ["--repeat", "3"], ["--format", "msr"], ["--device", "1"],
                                  ["--address-space"], ["--remap"]])
def test_trace_flags_with_a_workload_are_refused_not_ignored(flag):
    """Review wave 3: `--extend` with a synthetic workload ran the workload as if it were not given."""
    e = cli("replay", "--workload", "zipf:1.0", "--writes", "1000", *flag, ok=False)
    assert e.returncode == 2 and "only with a trace" in e.stderr and "Traceback" not in e.stderr, e.stderr


def test_a_transient_result_says_so_in_its_row(short):
    rows = wafer.compare(["base", "two-r"], trace=short, device=wafer.Device(op=0.25))
    assert all(r.transient for r in rows)
    table = wafer.format_table(rows)
    body = table.splitlines()[2:4]
    assert all("transient (" in line for line in body), table
    long = wafer.replay("base", trace=short, extend=3, device=wafer.Device(op=0.25))
    assert not long.transient
    human = cli("replay", "--trace", str(short)).stdout
    assert "only the prefill transient" in human.split("steady-state WAF")[0]
    assert "drive-writes" in human and "-block device" in human


def test_inspect_and_replay_count_drive_writes_alike(short):
    st = traces.inspect(str(short))
    r = wafer.replay("base", trace=short, device=wafer.Device(op=0.25))
    assert st.drive_writes == pytest.approx(r.drive_writes)
    assert st.address_space_drive_writes < st.drive_writes
    human = cli("traces", "inspect", str(short)).stdout
    assert "footprint (the device `wafer replay` sizes from it)" in human and "address space" in human


def test_long_trace_reads_report_their_progress(tmp_path, monkeypatch, capsys):
    """Issue 48 item 5: inspect, convert and extend count the bytes they read
    (as stored), which a progress line compares with the file's size; errors
    of the read still reach the caller."""
    import gzip

    from wafer import _core, progress, traces

    p = tmp_path / "t.csv.gz"
    with gzip.open(p, "wt") as f:
        for i in range(20000):
            f.write(f"{128166372003061629 + i * 1000},hm,0,Write,{(i * 7919 % 4096) * 4096},4096,1\n")
    before = _core.trace_bytes_read()
    traces.inspect(str(p), progress=True)
    assert _core.trace_bytes_read() - before >= p.stat().st_size
    # Lines at once (no delay): the progress line names the command and the bytes.
    monkeypatch.setattr(progress, "LINE_DELAY", 0.0)
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)
    monkeypatch.setattr(progress.Progress.__init__, "__defaults__", (True, 0.0, None, "blocks", None))
    traces.convert(str(p), str(tmp_path / "t.arrow"), progress=True)
    err = capsys.readouterr().err
    assert "convert t.csv.gz" in err and "bytes" in err, err
    with pytest.raises(wafer.TraceError, match="nope"):
        traces.inspect(str(tmp_path / "nope.csv"), progress=True)


def _fleet(path, volumes=5, requests=20000, seed=3):
    """An MSR trace of ``volumes`` volumes of skewed sizes (volume v writes ~1/(v+1) of the share)."""
    import random

    rng = random.Random(seed)
    weights = [1 / (v + 1) for v in range(volumes)]
    lines = []
    for i in range(requests):
        v = rng.choices(range(volumes), weights)[0]
        op = "Write" if rng.random() < 0.7 else "Read"
        lines.append(f"{128166372003061629 + i * 1000},hm,{v},{op},{rng.randrange(2000 + 500 * v) * 4096},"
                     f"{4096 * rng.randint(1, 4)},1\n")
    path.write_text("".join(lines))
    return path


def test_split_a_fleet_into_volumes(tmp_path):
    """Issue 47 item 2: one pass writes each volume's native trace; a split
    volume replays as --device ID of the source, and reports its counts."""
    from wafer import traces

    src = _fleet(tmp_path / "fleet.csv")
    vols = traces.split(str(src), str(tmp_path / "out"))
    assert [v["device"] for v in vols] == ["0", "1", "2", "3", "4"] or len(vols) == 5
    assert sum(v["requests"] for v in vols) == 20000
    assert not list((tmp_path / "out").glob(".wafer-split-*")), "spill files removed"
    for v in vols[:2]:
        sel = traces.Selection(device=v["device"])
        st = traces.inspect(str(src), selection=sel)
        assert (st.requests, st.writes, st.footprint_blocks) == (v["requests"], v["writes"], v["footprint_blocks"])
        a = wafer.replay("base", trace=v["path"], device=wafer.Device(logical_blocks=8192, segment_blocks=64))
        b = wafer.replay("base", trace=str(src), selection=sel,
                         device=wafer.Device(logical_blocks=8192, segment_blocks=64))
        assert (a.user_writes, a.gc_writes) == (b.user_writes, b.gc_writes)
    top = traces.split(str(src), str(tmp_path / "top"), "top:2")
    by_bytes = sorted(vols, key=lambda v: -v["write_bytes"])[:2]
    assert [v["device"] for v in top] == [v["device"] for v in by_bytes]
    some = traces.split(str(src), str(tmp_path / "some"), ["3", "1"])
    assert [v["device"] for v in some] == ["3", "1"]
    with pytest.raises(wafer.TraceError, match="no volume 9 in it .its volumes: 0, 1"):
        traces.split(str(src), str(tmp_path / "x"), ["9"])
    for bad in ("top:0", "abc", ""):
        with pytest.raises(wafer.ConfigError, match="volumes"):
            traces.split(str(src), str(tmp_path / "x"), bad)
    with pytest.raises(wafer.ConfigError, match="empty"):
        traces.split(str(src), str(tmp_path / "x"), [])


def test_split_on_the_command_line(tmp_path):
    import json
    import subprocess
    import sys

    src = _fleet(tmp_path / "fleet.csv", volumes=3, requests=3000)
    p = subprocess.run([sys.executable, "-m", "wafer", "traces", "split", str(src), "-o", str(tmp_path / "o"),
                        "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(json.loads(p.stdout)) == 3
    p = subprocess.run([sys.executable, "-m", "wafer", "traces", "split", str(src), "-o", str(tmp_path / "o"),
                        "--volumes", "7"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no volume 7" in p.stderr and "Traceback" not in p.stderr


def _srt_record(sec, usec, size, sectno, disk, read):
    import struct
    return struct.pack(">13I", 52, (1 << 16) | 1, sec, usec, 0, 0, size, sectno, (8 << 24) | (disk << 8) | 14,
                       0, 0, int(read), 0)


def test_the_peers_layouts_are_detected_and_read(tmp_path):
    """HP SRT (binary, the header's sector size), NetApp IOLogDump (both schemas) and MiDAS-Simulation's
    input: detected without --format, in the units their own tools read."""
    srt = tmp_path / "t.srt.gz"
    header = b"$$TR_IOREC-1.3\ndisks = {\n 0 -> {\n  sectorsize  = 256,\n }\n};\n\x0c"
    srt.write_bytes(gzip.compress(header + b"".join(_srt_record(i, 500, 4096, 8 * i, i % 2, i % 3 == 0)
                                                     for i in range(50))))
    st = traces.inspect(srt)
    assert (st.format, st.requests, st.reads) == ("hpsrt", 50, 17)
    assert st.to_dict()["address_space_blocks"] == -(-(8 * 49 * 256 + 4096) // 4096)
    assert traces.inspect(srt, "hpsrt:512").to_dict()["address_space_blocks"] == (8 * 49 * 512 + 4096) // 4096

    netapp = tmp_path / "n.csv"
    rows = ["#DUMP_OFFSET.I,ELAPSED_USECS.D,ELAPSED_TICKS.I,CMD.S,INFLIGHT_IOS.I,TS.I,SEQID.I,LUN_SSID.I,OP.I,"
            "PHASE.I,LBA.I,NBLKS.I,LATENCY_TICKS.I,HOST_ID.I,HOST_LUN.I,LATENCY_USECS.D"]
    for i in range(40):
        cmd, op = [("WR_IN", 1), ("RD_IN", 0), ("WR_OUT", 3)][i % 3]
        rows.append(f"{i},{81442951.096 + i * 100:.3f},1,{cmd},0,1,{i},1,{op},0,{2254431928 + 8 * i},8,1,6,1,5.0")
    netapp.write_text("\n".join(rows) + "\n")
    st = traces.inspect(netapp)
    assert (st.format, st.requests, st.reads, st.to_dict()["read"]["unkept_events"]) == ("netapp", 27, 13, 13)
    assert st.to_dict()["write_bytes"] == 14 * 4096

    midas = tmp_path / "m.trace"
    lines = [f"{i * 0.000001:.6f} {1 if i % 4 else 0} {i % 16} {8192 if i % 5 else 8182} " for i in range(60)]
    midas.write_text("\n".join(lines[:30] + ["LOAD_END"] + lines[30:] + ["0.001 3 2 4096"]) + "\n")
    st = traces.inspect(midas)
    assert (st.format, st.requests, st.trims) == ("midas", 61, 1)
    # LOAD_END: what came before it, as the simulator reports the writes after it apart.
    assert st.to_dict()["read"]["load_end"] == {
        "requests": 30, "write_bytes": sum(8192 if i % 5 else 4096 for i in range(30) if i % 4)}
    # The simulator's whole pages: 8,182 bytes are one page.
    assert st.to_dict()["write_bytes"] == sum(8192 if i % 5 else 4096 for i in range(60) if i % 4)
    r = wafer.replay("base", trace=midas, device=wafer.Device(logical_blocks=64, segment_blocks=4, op=0.5))
    assert r.user_writes > 0
