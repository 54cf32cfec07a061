import os

import pytest

import wafer


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Lifetime annotations of test traces go to a temporary cache, never ~/.cache/wafer
    (the CLI subprocesses inherit the variable)."""
    old = os.environ.get("WAFER_CACHE_DIR")
    os.environ["WAFER_CACHE_DIR"] = str(tmp_path_factory.mktemp("wafer-cache"))
    yield
    if old is None:
        os.environ.pop("WAFER_CACHE_DIR", None)
    else:
        os.environ["WAFER_CACHE_DIR"] = old


@pytest.fixture(autouse=True, scope="session")
def _private_tmpdir(tmp_path_factory):
    """Scratch files (the engine's scratch annotations, spawned workers, the browser) go to a
    temporary folder of pytest's, so a killed run leaves nothing in /tmp."""
    import tempfile

    old = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(tmp_path_factory.mktemp("tmp"))
    tempfile.tempdir = None
    yield
    if old is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = old
    tempfile.tempdir = None


@pytest.fixture(autouse=True, scope="session")
def _private_matplotlib(tmp_path_factory):
    """matplotlib's font cache goes to a temporary folder, never ~/.cache or ~/.config."""
    old = os.environ.get("MPLCONFIGDIR")
    os.environ["MPLCONFIGDIR"] = str(tmp_path_factory.mktemp("matplotlib"))
    yield
    if old is None:
        os.environ.pop("MPLCONFIGDIR", None)
    else:
        os.environ["MPLCONFIGDIR"] = old


@pytest.fixture
def small():
    """A small prefilled device: 16Ki blocks, 10% OP, 32-block segments."""
    return wafer.Device(logical_blocks=1 << 14, op=0.1, segment_blocks=32)


@pytest.fixture
def cli():
    """Run ``python -m wafer ARGS``; ``ok=True`` asserts exit code 0."""
    import subprocess
    import sys

    def run(*args, ok=True):
        p = subprocess.run([sys.executable, "-m", "wafer", *args], capture_output=True, text=True, timeout=300)
        if ok:
            assert p.returncode == 0, p.stderr
        return p

    return run
