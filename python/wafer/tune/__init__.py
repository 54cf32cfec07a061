"""AutoBlox (MICRO'23): learning-based SSD configuration tuning on wafer's
timing model. Workload clustering (:mod:`.clustering`), the configuration
database (:mod:`.autodb`), the parameter space and its constraints
(:mod:`.space`), the objective (:mod:`.objective`), the search with pruning
(:mod:`.search`), validation on the timing model (:mod:`.evaluate`) and the
end-to-end command (:mod:`.runner`).

``wafer.tune(target, others, ...)`` runs :func:`.runner.run` (the module is
callable), e.g.::

    report = wafer.tune("zipf:1.0", {"seq": ["seq"]}, reference="intel750", max_iterations=40)
    print(report.table()); report.write_preset("tuned.toml")
"""

import sys
import types

from .autodb import AutoDB
from .clustering import Clustering
from .objective import grade, performance
from .runner import TuneReport, run
from .search import Outcome, Study, prune, tune
from .space import PARAMS, Constraints, reference

__all__ = ["PARAMS", "AutoDB", "Clustering", "Constraints", "Outcome", "Study", "TuneReport", "grade",
           "performance", "prune", "reference", "run", "tune"]


class _CallableModule(types.ModuleType):
    """``wafer.tune(...)`` is :func:`.runner.run`, while ``wafer.tune.X`` stays the package."""

    def __call__(self, *args, **kwargs):
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
