import json
import sqlite3
import subprocess
import sys
import time

import pytest

import wafer
import wafer.sweep as sweep
from wafer.store import Store, is_store
from wafer.sweep.runner import run_job

STUDY = {"name": "s", "workloads": ["zipf:1.0"], "policies": ["base", "two-r"], "seeds": 3,
         "devices": [{"logical_blocks": 1 << 14, "segment_blocks": 32}], "drive_writes": 2}


@pytest.fixture
def jobs():
    return sweep.load(STUDY).jobs()


def test_a_finished_job_reads_back_in_full(tmp_path, jobs):
    db = Store(tmp_path / "a.sqlite")
    j = jobs[0]
    assert db.claim(j, "me") == "claimed"
    out = run_job(j.id, j.spec)
    assert out["status"] == "done" and out["seconds"] > 0
    db.finish(out, "me")
    df = db.to_pandas()
    row = df.iloc[0]
    assert (row.job, row.status, row.policy, row.seed, row.runs) == (j.id, "done", "base", 1, 1)
    r = wafer.replay("base", "zipf:1.0", device=wafer.Device(**STUDY["devices"][0]), drive_writes=2)
    assert row.waf == r.waf and row.user_writes == r.user_writes and row.gc_writes == r.gc_writes
    back = db.results()[0]
    assert back.to_dict()["windows"] == r.to_dict()["windows"]
    assert back.labels["device"] == "logical_blocks=16384,segment_blocks=32"
    ts = db.timeseries()
    assert len(ts) == 20 and ts.waf.tolist() == [w["waf"] for w in r.raw["windows"]]
    assert ts.user_writes.dtype.kind == "i", "counts stay integers"
    # A time-series column the store has not seen becomes a new column.
    out2 = run_job(jobs[1].id, jobs[1].spec)
    for w in out2["result"]["windows"]:
        w["latency_p99_us"] = 12.5
    db.claim(jobs[1], "me")
    db.finish(out2, "me")
    assert db.timeseries().latency_p99_us.dropna().tolist() == [12.5] * 20
    assert db.counts() == {"running": 0, "done": 2, "failed": 0}
    db.close()
    assert is_store(tmp_path / "a.sqlite") and not is_store(__file__)


def test_claims_respect_live_sweeps_and_take_over_dead_ones(tmp_path, jobs):
    db = Store(tmp_path / "c.sqlite")
    j = jobs[0]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket

    dead_owner = f"{socket.gethostname()}:{dead.stdout.strip()}:x"
    assert db.claim(j, dead_owner) == "claimed"
    assert db.claim(j, "other-host:1:y") == "claimed", "its process is gone: the job is free"
    assert db.claim(j, "me") == "busy", "a live claim (fresh heartbeat, other host) is respected"
    db.db.execute("UPDATE jobs SET heartbeat = ? WHERE id = ?", (time.time() - 3600, j.id))
    assert db.claim(j, "me") == "claimed", "a stale heartbeat frees it"
    assert db.db.execute("SELECT runs FROM jobs").fetchone()[0] == 3
    db.finish({"id": j.id, "status": "failed", "error": "boom", "result": None}, "me")
    assert db.claim(j, "me") == "failed" and db.claim(j, "me", retry_failed=True) == "claimed"
    assert db.release("me") == 1 and db.counts()["running"] == 0


def test_running_jobs_whose_sweep_is_gone_are_orphaned(tmp_path, jobs):
    import os
    import socket

    db = Store(tmp_path / "o.sqlite")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()
    owners = [f"{host}:{dead.stdout.strip()}:x", f"{host}:{os.getpid()}:y", "other-host:1:z", "other-host:2:w"]
    for j, owner in zip(jobs, owners):
        assert db.claim(j, owner) == "claimed"
    db.db.execute("UPDATE jobs SET heartbeat = ? WHERE owner = ?", (time.time() - 3600, owners[3]))
    state = {r["owner"]: r["orphaned"] for r in db.running()}
    assert state == {owners[0]: True, owners[1]: False, owners[2]: False, owners[3]: True}, \
        "dead here or silent for an hour: orphaned; alive here or heard from lately: running"
    assert [r["job"] for r in db.running(study="nope")] == []
    db.close()


WRITER = """
import sys, wafer.sweep as sweep
from wafer.store import Store
from wafer.sweep.runner import run_job
jobs = sweep.load({study}).jobs()
one = run_job(jobs[0].id, jobs[0].spec)
db = Store(sys.argv[1], timeout=120)
for i in range({n}):
    job = jobs[0].__class__(f"{{sys.argv[2]}}-{{i}}", jobs[0].labels, jobs[0].spec, jobs[0].config)
    assert db.claim(job, sys.argv[2]) == "claimed"
    db.finish(dict(one, id=job.id), sys.argv[2])
"""


def test_two_processes_writing_one_store_do_not_corrupt_it(tmp_path):
    path = tmp_path / "w.sqlite"
    Store(path).close()
    code = WRITER.format(study=repr(STUDY), n=400)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), name], stderr=subprocess.PIPE, text=True)
             for name in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT owner) FROM jobs WHERE status = 'done'").fetchone() == (800, 2)
    assert con.execute("SELECT COUNT(*) FROM windows").fetchone()[0] == 800 * 20
    con.close()


def test_not_a_store_is_refused(tmp_path):
    f = tmp_path / "x.sqlite"
    f.write_text("hello")
    with pytest.raises(wafer.ConfigError, match="not a wafer store"):
        Store(f)
    with pytest.raises(wafer.ConfigError, match=".parquet or .csv"):
        Store(tmp_path / "y.sqlite").export(tmp_path / "out.xlsx")


def test_export_parquet_and_csv(tmp_path, jobs):
    pd = pytest.importorskip("pandas")
    df = sweep.run(STUDY, tmp_path / "e.sqlite")
    with Store(tmp_path / "e.sqlite") as db:
        db.export(tmp_path / "a.parquet")
        db.export(tmp_path / "w.csv", timeseries=True)
        assert db.to_arrow().num_rows == 6
        assert json.loads(json.dumps(db.studies()))["s"]["name"] == "s"
    back = pd.read_parquet(tmp_path / "a.parquet")
    assert back.job.tolist() == df.job.tolist() and back.steady_waf.tolist() == df.steady_waf.tolist()
    assert len(pd.read_csv(tmp_path / "w.csv")) == 6 * 20


def test_a_store_made_before_a_metric_existed_gets_its_column(tmp_path, jobs):
    """Stores outlive versions: a metric column added since (here the accuracy's baselines) is added
    to an old store when it is opened, its old jobs reading as unmeasured."""
    path = tmp_path / "old.sqlite"
    db = Store(path)
    j = jobs[0]
    db.claim(j, "me")
    db.finish(run_job(j.id, j.spec), "me")
    db.db.execute("ALTER TABLE jobs DROP COLUMN user_majority")
    db.close()
    with sqlite3.connect(path) as con:
        assert "user_majority" not in {r[1] for r in con.execute("PRAGMA table_info(jobs)")}
    with Store(path) as db:
        df = db.to_pandas()
        assert len(df) == 1 and df.user_majority.isna().all() and df.waf.notna().all()
