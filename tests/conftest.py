import pytest

import wafer


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
