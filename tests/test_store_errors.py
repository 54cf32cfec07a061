"""A file that is not a results store (empty, text, other bytes, truncated,
damaged, someone else's SQLite database) is one clear error in every command
that reads or writes a store: one line naming the file and why, exit code 2,
no traceback; and wafer never adds its tables to a database of something else."""

import json
import re
import sqlite3

import pytest

import wafer
import wafer.report
import wafer.sweep as sweep
from wafer.store import Store

STUDY = ('name = "e"\nworkloads = ["zipf:1.0"]\npolicies = ["base"]\ndrive_writes = 1\n'
         "[[devices]]\nlogical_blocks = 16384\nsegment_blocks = 32\n")


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A real store of one finished job, closed (no WAL beside it)."""
    d = tmp_path_factory.mktemp("good")
    (d / "e.toml").write_text(STUDY)
    sweep.run(d / "e.toml", d / "e.sqlite", jobs=1)
    return (d / "e.sqlite").read_bytes()


def _foreign(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO photos VALUES (1, 'cat')")
    con.commit()
    con.close()


def _damaged(good):
    """A store whose table pages are overwritten (its first page, the schema, intact)."""
    b = bytearray(good)
    for i in range(4096 * 3, len(b), 3):
        b[i] = 0x5A
    return bytes(b)


NOT_SQLITE = "not an SQLite file|neither a wafer store"
#: name -> (how to make the file from a good store's bytes, what the error says: a regex)
BAD = {
    "zero-byte": (lambda p, g: p.write_bytes(b""), "an empty file"),
    "text": (lambda p, g: p.write_text("hello, not a store\n"), NOT_SQLITE),
    "binary": (lambda p, g: p.write_bytes(bytes(range(256)) * 20), NOT_SQLITE),
    "truncated": (lambda p, g: p.write_bytes(g[: len(g) // 2]), "truncated SQLite file"),
    "truncated-header": (lambda p, g: p.write_bytes(g[:60]), "truncated SQLite file"),
    "damaged": (lambda p, g: p.write_bytes(_damaged(g)), "damaged"),
    "foreign": (lambda p, g: _foreign(p), "not a wafer store: an SQLite database of something else"),
}


def _tables(path):
    con = sqlite3.connect(path)
    try:
        return sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    finally:
        con.close()


@pytest.mark.parametrize("kind", list(BAD))
def test_a_file_that_is_not_a_store_is_one_clear_error_in_every_command(kind, good, tmp_path, cli):
    make, says = BAD[kind]
    f = tmp_path / "bad.sqlite"
    make(f, good)
    before = f.read_bytes()
    (tmp_path / "e.toml").write_text(STUDY)
    commands = [("report", str(f), "-o", str(tmp_path / "rep"), "--no-static"),
                ("sweep", "status", str(f)),
                ("sweep", "export", str(f), "-o", str(tmp_path / "x.csv")),
                ("sweep", "run", str(tmp_path / "e.toml"), "--store", str(f), "-q")]
    if kind == "zero-byte":
        commands.pop()  # a new, empty file is fine to make a store of (below)
    for args in commands:
        p = cli(*args, ok=False)
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and "Traceback" not in p.stderr and len(lines) == 1, (args, p.stderr)
        assert str(f) in lines[0], (args, lines)
        assert re.search(says, lines[0]), (args, lines)
        assert f.read_bytes() == before, f"{args} changed the file"
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "rep" / "report.html").exists()
    if kind == "foreign":
        assert _tables(f) == ["photos"], "wafer's tables are never added to another database"


def test_a_new_or_empty_file_becomes_a_store_but_readers_refuse_it(tmp_path, cli):
    (tmp_path / "e.toml").write_text(STUDY)
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(wafer.ConfigError, match="empty.sqlite: an empty file"):
        Store(empty, create=False)
    with pytest.raises(wafer.ConfigError, match="missing.sqlite: no such file"):
        Store(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()
    # An SQLite database without tables is no store to read, but a sweep may fill it.
    blank = tmp_path / "blank.sqlite"
    con = sqlite3.connect(blank)
    con.execute("PRAGMA user_version = 7")
    con.close()
    assert "without tables" in cli("sweep", "status", str(blank), ok=False).stderr
    for f in (empty, blank, tmp_path / "new.sqlite"):
        cli("sweep", "run", str(tmp_path / "e.toml"), "--store", str(f), "-q")
        assert json.loads(cli("sweep", "status", str(f), "--json").stdout)["done"] == 1


def test_the_python_api_refuses_the_same_files(good, tmp_path):
    for kind, (make, says) in BAD.items():
        f = tmp_path / f"{kind}.sqlite"
        make(f, good)
        for create in (True, False):
            if kind == "zero-byte" and create:
                continue
            with pytest.raises(wafer.ConfigError) as e:
                Store(f, create=create).close()
            assert str(f) in str(e.value) and re.search(says, str(e.value)) and "\n" not in str(e.value), \
                (kind, e.value)
        with pytest.raises(wafer.ConfigError, match=says) as e:
            wafer.report.write_report(f, tmp_path / "rep", static_formats=())
        assert str(f) in str(e.value)
    assert _tables(tmp_path / "foreign.sqlite") == ["photos"]


def test_a_report_of_a_file_that_is_neither_store_nor_json_names_it(tmp_path, cli):
    cases = {"empty.json": b"", "blank.json": b"  \n", "text.json": b"hello\n", "bin.json": b"\x80\x81\x00\xff",
             "number.json": b"42", "other.json": b'{"a": 1}'}
    for name, data in cases.items():
        f = tmp_path / name
        f.write_bytes(data)
        p = cli("report", str(f), "-o", str(tmp_path / "r"), "--no-static", ok=False)
        assert p.returncode == 2 and "Traceback" not in p.stderr and str(f) in p.stderr, (name, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "not JSON (Expecting value at line 1" in cli("report", str(tmp_path / "text.json"), "-o",
                                                        str(tmp_path / "r"), ok=False).stderr
