"""AutoBlox (MICRO'23): learning-based SSD configuration tuning on wafer's
timing model. Workload clustering (:mod:`.clustering`), the configuration
database (:mod:`.autodb`), the parameter space and its constraints
(:mod:`.space`), the objective (:mod:`.objective`) and the search with pruning
(:mod:`.search`)."""

from .autodb import AutoDB
from .clustering import Clustering
from .objective import grade, performance
from .search import Outcome, Study, prune, tune
from .space import PARAMS, Constraints, reference

__all__ = ["PARAMS", "AutoDB", "Clustering", "Constraints", "Outcome", "Study", "grade", "performance", "prune",
           "reference", "tune"]
