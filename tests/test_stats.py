import math

import pandas as pd
import pytest

from wafer.stats import fmt_interval, mean_interval, summarize, t975


def test_mean_and_t_interval():
    n, m, h = mean_interval([1.0, 2.0, 3.0])
    assert (n, m) == (3, 2.0) and h == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    assert math.isnan(mean_interval([5.0])[2]), "one value: no interval"
    assert mean_interval([None, 2.0, float("nan"), 4.0])[:2] == (2, 3.0)
    assert mean_interval([])[0] == 0
    assert t975(35) == t975(30) and t975(1000) == 1.96 and math.isnan(t975(0))


def test_summarize_keeps_group_order():
    df = pd.DataFrame({"policy": ["b", "a", "b", "a"], "waf": [2.0, 1.0, 4.0, 1.0]})
    s = summarize(df, ["policy"], "waf")
    assert s.policy.tolist() == ["b", "a"] and s["mean"].tolist() == [3.0, 1.0]
    assert s.half.iloc[1] == 0.0 and s.lo.iloc[0] < 3.0 < s.hi.iloc[0]
    assert fmt_interval(3.0, 0.5) == "3.000 ± 0.500" and fmt_interval(3.0, float("nan")) == "3.000"
    assert fmt_interval(float("nan"), 1.0) == "-"
