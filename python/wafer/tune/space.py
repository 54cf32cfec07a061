"""AutoBlox's parameter space (§3.2, the artifact's ``configuration_choices``)
over wafer's timing configuration, its encoding and its constraints (§3.4).

Every parameter has one of four types (§3.2): **continuous** (a range split
into evenly spaced values), **discrete** (an explicit list), **boolean** and
**categorical** (one-hot). A configuration is a dict ``name -> value``; its
encoding for the Gaussian process is the value index of each numeric or
boolean parameter and a one-hot block per categorical one. Distances between
configurations (the Manhattan exploration bound) are L1 over value indices,
a categorical change counting 1.

Constraints (§1.6 of the spec): the raw capacity (channels x chips x dies x
planes x blocks x pages x page size) within [0.9, 1] of the next power of
two at or above the reference's; the data cache and the mapping-table cache
add up to the reference's DRAM; the artifact's chip-layout limits (ch·chip
in [40, 80], die·plane in [4, 16], ch·chip·die·plane in [256, 1024], not
ch·chip > 64 with die·plane > 8); interface and flash type fixed; and a power
budget on the simulated average power, which the artifact never enforced.

Values are in the units of wafer's timing presets: times in ns, sizes in
bytes, rates in MT/s or GB/s as named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20


@dataclass(frozen=True)
class Param:
    """One tunable: its preset key, type, values and the reference's value."""

    name: str
    kind: str  # "continuous" | "discrete" | "boolean" | "categorical"
    values: tuple
    base: Any
    #: Tuning group tag: "layout" and "dram" parameters are tuned together (§3.3).
    group: str = ""
    #: Dropped by AutoBlox's hard-coded insensitive list (§1.7).
    pruned: bool = False

    def index(self, v: Any) -> int:
        try:
            return self.values.index(v)
        except ValueError:
            raise ValueError(f"parameter {self.name}: {v!r} is not one of {list(self.values)}") from None


def _plane_schemes() -> tuple[str, ...]:
    """MQSim's 24 plane-allocation orders: permutations of C(hannel), W(ay =
    chip), D(ie), P(lane)."""
    from itertools import permutations

    return tuple("".join(p) for p in permutations("CWDP"))


#: The NVMe MLC space with the Intel 750 as reference (spec §1.5).
PARAMS: tuple[Param, ...] = (
    Param("pcie_lane_gbps", "discrete", (0.5, 1.0, 2.0, 4.0, 8.0), 1.0),
    Param("pcie_lanes", "discrete", (1, 2, 4, 8, 16), 4),
    Param("cache_bytes", "continuous", tuple((800 + 64 * i) * MIB for i in range(-11, 4)), 800 * MIB, group="dram"),
    Param("dram_row_bytes", "discrete", (1024, 2048, 4096, 8192, 16384), 4096),
    Param("dram_rate_mts", "discrete", (100, 200, 400, 800, 1600, 2133, 2400, 2666, 3200), 2133),
    Param("dram_burst", "discrete", (1, 2, 4, 8, 16), 8),
    Param("dram_trcd_ns", "discrete", (4, 7, 14, 21, 28), 14),
    Param("dram_tcl_ns", "discrete", (4, 7, 14, 21, 28), 14),
    Param("dram_trp_ns", "discrete", (4, 7, 14, 21, 28), 14),
    Param("cmt_bytes", "continuous", tuple(64 * MIB * i for i in range(1, 9)), 256 * MIB, group="dram"),
    Param("plane_allocation", "categorical", _plane_schemes(), "CWDP"),
    Param("op", "continuous", (0.10, 0.15, 0.20, 0.25, 0.30), 0.20),
    Param("gc_threshold", "continuous", (0.10, 0.15, 0.20, 0.25, 0.30), 0.10),
    Param("gc_hard_threshold", "continuous", (0.10, 0.15, 0.20, 0.25, 0.30), 0.10),
    Param("gc_victim", "categorical", ("greedy", "rga", "random", "random-p", "random-pp", "fifo"), "greedy"),
    Param("copyback", "boolean", (False, True), False),
    Param("preemptible_gc", "boolean", (False, True), True),
    Param("channels", "discrete", tuple(range(4, 33, 2)), 12, group="layout"),
    Param("channel_width_bytes", "discrete", (1, 2, 4, 8), 1),
    Param("channel_rate_mts", "discrete", (100, 200, 333, 800), 333),
    Param("chips_per_channel", "discrete", tuple(range(1, 9)), 5, group="layout"),
    Param("suspension", "categorical", ("none", "program", "program-erase", "erase"), "none"),
    Param("dies_per_chip", "discrete", tuple(range(1, 17)), 8, group="layout"),
    Param("planes_per_die", "discrete", tuple(range(1, 17)), 1, group="layout"),
    Param("blocks_per_plane", "discrete", tuple(range(128, 1025, 128)), 512, group="layout"),
    Param("pages_per_block", "discrete", tuple(range(128, 1025, 128)), 512, group="layout"),
    # Flash latencies: swept by coarse pruning, not tuned (§1.5 "P").
    Param("read_lsb_ns", "continuous", (25_000, 50_000, 59_975, 75_000, 100_000), 59_975, pruned=True),
    Param("read_msb_ns", "continuous", (25_000, 50_000, 75_000, 104_956, 125_000), 104_956, pruned=True),
    Param("program_lsb_ns", "continuous", (82_062, 250_000, 500_000, 750_000, 1_000_000), 82_062, pruned=True),
    Param("program_msb_ns", "continuous", (250_000, 750_000, 1_250_000, 1_750_000, 2_250_000), 2_250_000,
          pruned=True),
    Param("erase_ns", "continuous", (3_000_000, 3_800_000), 3_000_000, pruned=True),
)

BY_NAME = {p.name: p for p in PARAMS}
LAYOUT = tuple(p.name for p in PARAMS if p.group == "layout")
DRAM = tuple(p.name for p in PARAMS if p.group == "dram")
PAGE_BYTES = 4096


#: ``--constraints realistic`` (issue 44): values shipped parts have, each
#: with its source; a rule is ``values`` (allowed), ``max``/``min``, or
#: ``fixed`` (the reference's value). ``ssd-presets.md`` is
#: ``../shared/specs/ssd-presets.md`` (SimpleSSD's drive files).
REALISTIC: dict[str, dict[str, Any]] = {
    "channel_width_bytes": {"values": [1], "source": "NAND buses are x8: every drive in ssd-presets.md "
                            "(channel rate x width), Micron MLC NAND datasheets (device width x8)"},
    "dies_per_chip": {"values": [1, 2, 4, 8], "source": "packages of 1, 2, 4 or 8 dies (Micron MLC datasheets); "
                      "8 is the most in ssd-presets.md"},
    "planes_per_die": {"values": [1, 2], "source": "MLC dies have 1 or 2 planes (ssd-presets.md's MLC drives; "
                       "Micron MLC two-plane commands)"},
    "channels": {"max": 18, "source": "8 to 18 channels in shipped NVMe controllers (ssd-presets.md: 2-16; the "
                 "Intel 750 1.2 TB: 18)"},
    "pages_per_block": {"values": [128, 256, 512], "source": "MLC blocks of 128-512 pages, powers of two (Micron "
                        "MLC datasheets; ssd-presets.md's MLC drives: 512)"},
    "blocks_per_plane": {"min": 512, "source": "512 to 2048 blocks per plane (ssd-presets.md: 512, 1364; Micron "
                         "MLC: 2048)"},
    "pcie_lanes": {"fixed": True, "source": "the reference's interface (Intel 750: PCIe 3 x4); the paper fixes "
                   "the interface"},
    "pcie_lane_gbps": {"fixed": True, "source": "the reference's interface (PCIe 3: ~1 GB/s per lane)"},
}
#: The user capacity window of ``realistic``, as fractions of the
#: reference's (raw x (1 - op)): a drive sold at the reference's size holds
#: it, and over-provisioning cannot buy speed by shrinking it.
USER_CAPACITY = (1.0, 1.05)


def _user_pages(c: dict[str, Any]) -> float:
    return (c["channels"] * c["chips_per_channel"] * c["dies_per_chip"] * c["planes_per_die"]
            * c["blocks_per_plane"] * c["pages_per_block"]) * (1 - c["op"])


@dataclass
class Constraints:
    """What a configuration must satisfy (§3.4). ``power_watts``: the budget on
    the simulated average power (None: unconstrained); ``power_ratio``: a
    budget relative to the reference's power on the same trace (1.1: +10%).
    ``rules`` (``--constraints``): per parameter, the values shipped parts
    have (:data:`REALISTIC`); ``user_capacity``: the window of the user
    capacity relative to the reference's, instead of the artifact's raw
    capacity window."""

    capacity_pages: int = 12 * 5 * 8 * 1 * 512 * 512
    dram_bytes: int = (800 + 256) * MIB
    power_watts: float | None = None
    chip_limits: bool = True
    #: Bounds of the capacity window as fractions of the next power of two.
    capacity_window: tuple[float, float] = (0.9, 1.0)
    extra: dict[str, Any] = field(default_factory=dict)
    power_ratio: float | None = None
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    user_capacity: tuple[float, float] | None = None
    #: What the constraints are called in reports (``realistic``, ``none``, a file).
    name: str = "none"

    @classmethod
    def of(cls, spec: str | None, **kw: Any) -> Constraints:
        """``--constraints``: ``realistic`` (default), ``none`` (the
        artifact's space and limits), or a TOML file of rules (the layout of
        :data:`REALISTIC`; ``extends = "realistic"`` starts from it;
        ``user_capacity = [lo, hi]``). A rule the reference breaks, an
        unknown parameter or an empty range is an error naming the flag."""
        spec = spec or "realistic"
        if spec == "none":
            return cls(**kw)
        if spec == "realistic":
            return cls(rules=dict(REALISTIC), user_capacity=USER_CAPACITY, name="realistic", **kw)
        import tomllib

        try:
            with open(spec, "rb") as f:
                d = tomllib.load(f)
        except OSError as e:
            raise ValueError(f"--constraints {spec}: cannot read it ({e.strerror})") from None
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"--constraints {spec}: not TOML ({e})") from None
        extends = d.pop("extends", None)
        if extends not in (None, "realistic"):
            raise ValueError(f"--constraints {spec}: extends = {extends!r}; only 'realistic'")
        rules = dict(REALISTIC) if extends else {}
        window = d.pop("user_capacity", USER_CAPACITY if extends else None)
        for name, rule in d.items():
            if name not in BY_NAME:
                raise ValueError(f"--constraints {spec}: {name}: not a parameter of the space")
            if not isinstance(rule, dict) or not set(rule) <= {"values", "min", "max", "fixed", "source"}:
                raise ValueError(f"--constraints {spec}: {name}: a table of values / min / max / fixed / source")
            num = (int, float)
            if (("min" in rule and not isinstance(rule["min"], num)) or ("max" in rule and not isinstance(rule["max"], num))
                    or ("values" in rule and not (isinstance(rule["values"], list) and rule["values"]))):
                raise ValueError(f"--constraints {spec}: {name}: min and max are numbers, values a non-empty list")
            rules[name] = rule
        if window is not None:
            if not (isinstance(window, (list, tuple)) and len(window) == 2
                    and all(isinstance(x, (int, float)) for x in window) and 0 < window[0] <= window[1]):
                raise ValueError(f"--constraints {spec}: user_capacity = {window!r}; [lo, hi] with 0 < lo <= hi")
            window = (float(window[0]), float(window[1]))
        out = cls(rules=rules, user_capacity=window, name=spec, **kw)
        ref = reference()
        for name, rule in rules.items():
            p = BY_NAME[name]
            allowed = [v for v in p.values if out._allows(name, rule, v)]
            if not allowed:
                raise ValueError(f"--constraints {spec}: {name}: no value of the space {list(p.values)} is allowed")
            if not out._allows(name, rule, ref[name]):
                raise ValueError(f"--constraints {spec}: {name}: the reference's {ref[name]!r} breaks it")
        return out

    @staticmethod
    def _allows(name: str, rule: dict[str, Any], v: Any) -> bool:
        if rule.get("fixed"):
            return v == BY_NAME[name].base
        if "values" in rule and v not in rule["values"]:
            return False
        if "min" in rule and v < rule["min"]:
            return False
        return not ("max" in rule and v > rule["max"])

    def held(self) -> list[dict[str, Any]]:
        """The rules as a report lists them: parameter, rule, source."""
        out = [{"parameter": n, "rule": {k: v for k, v in r.items() if k != "source"}, "source": r.get("source")}
               for n, r in self.rules.items()]
        if self.user_capacity:
            out.append({"parameter": "user capacity", "rule": {"of_reference": list(self.user_capacity)},
                        "source": "the reference drive's user capacity (raw x (1 - op))"})
        return out

    def capacity_bounds(self) -> tuple[int, int]:
        top = 1 << (self.capacity_pages - 1).bit_length()
        return int(self.capacity_window[0] * self.capacity_pages), top

    def violations(self, c: dict[str, Any]) -> list[str]:
        """Why ``c`` is not allowed (empty: it is). Power is checked after a
        validation, from the measured average power (:meth:`power_violation`)."""
        out = []
        pages = (c["channels"] * c["chips_per_channel"] * c["dies_per_chip"] * c["planes_per_die"]
                 * c["blocks_per_plane"] * c["pages_per_block"])
        if self.user_capacity:
            want = _user_pages(reference())
            lo_u, hi_u = self.user_capacity
            got = _user_pages(c)
            if not lo_u * want <= got <= hi_u * want:
                out.append(f"user capacity {got / want:.3f}x the reference's, outside [{lo_u}, {hi_u}]")
        else:
            lo, hi = self.capacity_bounds()
            if not lo <= pages <= hi:
                out.append(f"capacity {pages} pages outside [{lo}, {hi}]")
        for name, rule in self.rules.items():
            if not self._allows(name, rule, c[name]):
                out.append(f"{name} = {c[name]!r} breaks {self.name}: "
                           + ", ".join(f"{k} {v}" for k, v in rule.items() if k != "source"))
        if c["cache_bytes"] + c["cmt_bytes"] != self.dram_bytes:
            out.append(f"cache + CMT = {(c['cache_bytes'] + c['cmt_bytes']) // MIB} MiB, "
                       f"must be {self.dram_bytes // MIB} MiB")
        if self.chip_limits:
            cc = c["channels"] * c["chips_per_channel"]
            dp = c["dies_per_chip"] * c["planes_per_die"]
            if not 40 <= cc <= 80:
                out.append(f"channels x chips = {cc}, must be in [40, 80]")
            if not 4 <= dp <= 16:
                out.append(f"dies x planes = {dp}, must be in [4, 16]")
            if not 256 <= cc * dp <= 1024:
                out.append(f"channels x chips x dies x planes = {cc * dp}, must be in [256, 1024]")
            if cc > 64 and dp > 8:
                out.append("more than 64 chips with more than 8 planes per chip")
        return out

    def power_violation(self, watts: float | None, reference_watts: float | None = None) -> str | None:
        """Why a validation's average power breaks the budget (None: it does not)."""
        if watts is None:
            return None
        if self.power_watts is not None and watts > self.power_watts:
            return f"average power {watts:.2f} W over the budget of {self.power_watts:.2f} W"
        if self.power_ratio is not None and reference_watts and watts > self.power_ratio * reference_watts:
            return (f"average power {watts:.2f} W over the budget of {self.power_ratio:.2f}x the reference's "
                    f"{reference_watts:.2f} W on the same trace")
        return None


def reference() -> dict[str, Any]:
    """The reference configuration (Intel 750)."""
    return {p.name: p.base for p in PARAMS}


def encode(c: dict[str, Any], params: tuple[Param, ...] = PARAMS) -> list[float]:
    """The GP's input vector: value indices, one-hot blocks for categoricals."""
    x: list[float] = []
    for p in params:
        i = p.index(c[p.name])
        if p.kind == "categorical":
            x += [1.0 if k == i else 0.0 for k in range(len(p.values))]
        else:
            x.append(float(i))
    return x


def distance(a: dict[str, Any], b: dict[str, Any], params: tuple[Param, ...] = PARAMS) -> int:
    """Manhattan distance over value indices (a categorical change counts 1)."""
    d = 0
    for p in params:
        if p.kind == "categorical":
            d += int(a[p.name] != b[p.name])
        else:
            d += abs(p.index(a[p.name]) - p.index(b[p.name]))
    return d


def key(c: dict[str, Any]) -> str:
    """A stable identity of a configuration."""
    return ";".join(f"{p.name}={c[p.name]}" for p in PARAMS)


def neighbours(c: dict[str, Any], names: list[str], cons: Constraints,
               params: tuple[Param, ...] = PARAMS) -> list[dict[str, Any]]:
    """Adjacent configurations over the parameters ``names`` (§3.4, ❸): each
    numeric parameter one index step up or down, a boolean flipped, each
    other category; a DRAM parameter repaired by its partner so the sum
    holds; a layout parameter repaired by up to two other layout parameters
    (within ½..2× and any value) so capacity and the chip limits hold."""
    out: dict[str, dict[str, Any]] = {}
    by_name = {p.name: p for p in params}

    def add(n: dict[str, Any]) -> None:
        if not cons.violations(n):
            out.setdefault(key(n), n)

    for name in names:
        p = by_name[name]
        i = p.index(c[name])
        if p.kind == "categorical":
            steps = [v for v in p.values if v != c[name]]
        elif p.kind == "boolean":
            steps = [not c[name]]
        else:
            steps = [p.values[j] for j in (i - 1, i + 1) if 0 <= j < len(p.values)]
        for v in steps:
            n = dict(c, **{name: v})
            if name in DRAM:
                (other,) = [d for d in DRAM if d != name]
                rest = cons.dram_bytes - v
                if rest in by_name[other].values:
                    add(dict(n, **{other: rest}))
            elif name in LAYOUT:
                if not cons.violations(n):
                    add(n)
                    continue
                others = [q for q in LAYOUT if q != name]
                for a in range(len(others)):
                    qa = by_name[others[a]]
                    for va in qa.values:
                        if not (c[qa.name] / 2 <= va <= 2 * c[qa.name]):
                            continue
                        na = dict(n, **{qa.name: va})
                        if not cons.violations(na):
                            add(na)
                            continue
                        for b in range(a + 1, len(others)):
                            qb = by_name[others[b]]
                            for vb in qb.values:
                                add(dict(na, **{qb.name: vb}))
            else:
                add(n)
    return list(out.values())
