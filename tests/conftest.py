import pytest

import wafer


@pytest.fixture
def small():
    """A small prefilled device: 16Ki blocks, 10% OP, 64-block segments."""
    return wafer.Device(logical_blocks=1 << 14, op=0.1, segment_blocks=64)
