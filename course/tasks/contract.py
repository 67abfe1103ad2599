"""A task's contract: the one place that says what a check may give the learner's code and what it wants back.

A :class:`Contract` states

* the **domain** of every size and launch parameter (:class:`Size`, with :attr:`Contract.fits` for limits that
  tie several together, such as 1024 threads per block), and which block sizes the task allows;
* the **input families** (:class:`Family`) that together cover the domain of the values, extremes included;
* the **dtypes** of storage and of arithmetic (the compile gate refuses float64 arithmetic where the contract
  says float32);
* the **method**, as limits on every counter of ``gpusim.Report`` relative to the reference solution's own
  figure on the same case (:class:`Budgeted`), or a line saying why a counter is left free
  (:class:`Unbudgeted`);
* the **explicit examples**: hand-picked adversarial cases, run before the drawn ones;
* where the **reference solution** lives (:class:`Solution`: a notebook of ``solutions/`` and the names it
  defines).

:meth:`Contract.cases` gives the cases of a check: the explicit examples, then cases drawn with Hypothesis
from the domain and the families. The draw is a pure function of the contract and the seeds, so a check
cell, the hidden tests and the grader's three processes all see the same list; other seeds draw other cases.
:meth:`Contract.simpler` proposes smaller cases in the domain, which :func:`course.tasks.common.check` uses
to shrink a failing case.
"""

from __future__ import annotations

import contextlib
import math
import threading
import zlib
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from .common import Case

COUNTER_WORDS = {  # every integer counter of gpusim.Report, in words a learner reads
    "blocks": "blocks",
    "threads": "threads",
    "barriers": "barriers completed, summed over blocks",
    "max_block_barriers": "barrier steps in its busiest block",
    "max_thread_collectives": "warp collectives (shuffles, votes) in its busiest thread",
    "static_shared_bytes": "bytes of static shared memory per block",
    "dynamic_shared_bytes": "bytes of dynamic shared memory per block",
    "global_loads": "global reads",
    "global_stores": "global writes",
    "global_atomics": "atomic updates of global memory",
    "global_bytes": "bytes read or written in global memory",
    "global_requests": "warp-wide accesses of global memory",
    "global_sectors": "sector transfers of global memory (32 bytes each, counted per warp-wide access)",
    "shared_loads": "reads of shared memory",
    "shared_stores": "writes of shared memory",
    "shared_atomics": "atomic updates of shared memory",
    "shared_requests": "warp-wide accesses of shared memory",
    "bank_conflicts": "extra shared-memory wavefronts caused by bank conflicts",
    "max_thread_accesses": "element accesses in its busiest thread",
    "active_threads": "threads that touched memory",
}
COUNTERS = tuple(COUNTER_WORDS)
SHARED_BYTES = ("static_shared_bytes", "dynamic_shared_bytes")
HYPOTHESIS_MAX_TRIES = 4  # lists of cases asked of Hypothesis at most, in case one repeats a case


# ------------------------------------------------------------------------------------------------ domain

@dataclass(frozen=True)
class Size:
    """The domain of one integer size or launch parameter: ``low`` to ``high`` (None: no upper limit).

    ``drawn`` caps the drawn cases, to keep each cheap to simulate: a number, or a function of the sizes drawn
    before this one (``lambda p: 1024 // p["block_x"]``). The explicit examples may go beyond it. ``choices``,
    where not every whole number from ``low`` to ``high`` is allowed (whole warps, powers of two), lists the
    ones that are; ``low`` must be one of them."""

    name: str
    low: int
    high: int | None
    drawn: int | Callable[[dict], int]
    about: str = ""
    choices: tuple[int, ...] = ()

    def top(self, params: dict) -> int:
        """The largest value a drawn case may take, given the sizes drawn before this one."""
        value = self.drawn(params) if callable(self.drawn) else self.drawn
        return max(self.low, value if self.high is None else min(value, self.high))

    def allows(self, value: int) -> bool:
        """Is ``value`` in this size's domain?"""
        within = self.low <= value and (self.high is None or value <= self.high)
        return within and (not self.choices or value in self.choices)

    def at_most(self, value: int) -> int:
        """The largest value of the domain that is not above ``value`` (``low`` if none is)."""
        return max((choice for choice in self.choices if self.low <= choice <= value), default=self.low) \
            if self.choices else max(self.low, value)

    def strategy(self, params: dict):
        """The Hypothesis strategy of a drawn value, given the sizes drawn before this one."""
        from hypothesis import strategies as st

        top = self.top(params)
        if self.choices:
            return st.sampled_from([choice for choice in self.choices if self.low <= choice <= top]
                                   or [self.low])
        return st.integers(self.low, top)


@dataclass(frozen=True)
class Family:
    """A family of input values: its name (shown in a case's label) and what it holds."""

    name: str
    about: str


# ------------------------------------------------------------------------------------------------ method

@dataclass(frozen=True)
class Slack:
    """How far from the reference's figure a limit lies: ``rel`` of it, plus ``extra(reference, sizes)``."""

    rel: float = 0.0
    extra: Callable[[dict, dict], int] | None = None
    words: str = ""  # what the extra allows for, e.g. "one padding column per tile"

    def amount(self, figure: int, reference: dict, params: dict) -> int:
        return math.floor(figure * self.rel) + (self.extra(reference, params) if self.extra else 0)

    def describe(self) -> str:
        parts = [f"{self.rel:.0%}"] if self.rel else []
        parts += [self.words] if self.words else []
        return "the reference solution's figure" + (f" + {' + '.join(parts)}" if parts else " exactly")


EXACT = Slack()


@dataclass(frozen=True)
class Budgeted:
    """A counter the learner's kernel must keep within ``most`` above (None: no ceiling) and ``least`` below
    (None: no floor) the reference solution's figure on the same case. ``asked`` says, in the task's words,
    what the figure is made of (or computes those words from the case's sizes, with the task's own formula);
    ``hint`` what to try when a limit is crossed."""

    counter: str
    asked: str | Callable[[dict], str] = ""
    hint: str = ""
    most: Slack | None = EXACT
    least: Slack | None = None

    @property
    def what(self) -> str:
        return COUNTER_WORDS[self.counter]

    def asked_for(self, params: dict) -> str:
        return self.asked(params) if callable(self.asked) else self.asked

    def limits(self, reference: dict, params: dict) -> tuple[int | None, int | None]:
        """(floor, ceiling) for one case, from the reference's profile of that case."""
        figure = int(reference[self.counter])
        low = None if self.least is None else max(0, figure - self.least.amount(figure, reference, params))
        high = None if self.most is None else figure + self.most.amount(figure, reference, params)
        return low, high


@dataclass(frozen=True)
class Unbudgeted:
    """A counter the contract leaves free, and why (one line)."""

    counter: str
    why: str


def method(budgets: Sequence[Budgeted], free: dict[str, str] | None = None,
           default: Slack = EXACT) -> tuple[Budgeted | Unbudgeted, ...]:
    """Every counter of gpusim.Report: the ``budgets`` given (checked in this order, so the first names the
    failure a learner reads), ``free`` ones (counter -> why) unbudgeted, and the rest budgeted at ``default``
    above the reference: a kernel doing more of anything than the reference does is doing something else.
    Shared memory left to the default is bounded below too, at the reference's figure."""
    free = free or {}
    named = [budget.counter for budget in budgets] + list(free)
    if len(set(named)) != len(named) or not set(named) <= set(COUNTERS):
        raise ValueError(f"unknown or repeated counters among {named}")
    return (*budgets, *(Unbudgeted(name, why) for name, why in free.items()),
            *(Budgeted(name, most=default, least=EXACT if name in SHARED_BYTES else None)
              for name in COUNTERS if name not in named))


def no_kernel(why: str) -> tuple[Unbudgeted, ...]:
    """The method of a plain-Python task: every counter unbudgeted, for one reason (no kernel runs; the
    task's reads and the state it keeps between chunks are judged instead)."""
    return method((), free=dict.fromkeys(COUNTERS, why))


# ------------------------------------------------------------------------------------- reference solution

@dataclass(frozen=True)
class Solution:
    """The reference solution of a task: the names a solution notebook defines, by role (``kernel``,
    ``launch``), and ``build``, which turns the loaded objects into what the check runs (a kernel factory
    called with its width)."""

    notebook: str  # stem of a notebook in solutions/, e.g. "05_tiled_matmul"
    names: tuple[tuple[str, str], ...]  # (role, name) pairs
    build: Callable[[dict], dict] | None = None


# ---------------------------------------------------------------------------------------------- contract

@dataclass(frozen=True)
class Contract:
    """Everything a task promises and demands, from which its cases and limits are derived."""

    name: str  # unique among the course's contracts: the key of its profiles
    sizes: tuple[Size, ...]
    inputs: tuple[Family, ...]
    method: tuple[Budgeted | Unbudgeted, ...]
    solution: Solution
    examples: tuple[dict, ...] = ()  # visible explicit cases: sizes, and "inputs" (a family) if not the first
    hidden_examples: tuple[dict, ...] = ()  # explicit cases only hidden tests run
    drawn: int = 4  # cases drawn by Hypothesis for each set of seeds
    fits: Callable[[dict], bool] = lambda params: True  # limits tying sizes together (all cases)
    cost: Callable[[dict], float] = lambda params: math.prod(params.values())  # of simulating a case
    block_sizes: str = ""  # which block sizes the task allows, in words
    storage: str = "float32"
    arithmetic: str = "float32"  # "float32": the compile gate refuses float64 arithmetic
    values_matter: bool = False  # the counters depend on the input values: profiles per inputs and seed too

    @property
    def measured(self) -> bool:
        """Does the method budget any counter (so that the reference's profile is needed)? A plain-Python
        task's is all Unbudgeted (:func:`no_kernel`): no kernel runs, its method is judged otherwise."""
        return any(isinstance(entry, Budgeted) for entry in self.method)

    def __post_init__(self):
        counters = [entry.counter for entry in self.method]
        if sorted(counters) != sorted(COUNTERS):
            raise ValueError(f"{self.name}: the method must name every counter once; use contract.method()")
        for example in self.examples + self.hidden_examples:
            if not self.in_domain(self._sizes_of(example)):
                raise ValueError(f"{self.name}: the example {example} lies outside the domain")

    # ----------------------------------------------------------------------------------- the cases

    def cases(self, seeds: Sequence[int] = (0, 1, 2), hidden: bool = False) -> CaseList:
        """The check's cases for these seeds: the explicit examples (the hidden ones for the hidden tests),
        each with the seeds in turn, then the drawn cases. Drawn on first use."""
        return CaseList(self, tuple(seeds), hidden)

    def _sizes_of(self, example: dict) -> dict:
        return {size.name: example[size.name] for size in self.sizes}

    def _case(self, params: dict, inputs: str, seed: int) -> Case:
        return Case(tuple((size.name, int(params[size.name])) for size in self.sizes), seed, inputs)

    def explicit_cases(self, seeds: tuple[int, ...], hidden: bool) -> list[Case]:
        """The explicit examples (``hidden``: the hidden ones) as cases, with the seeds in turn; an example
        that names no inputs family takes the families in turn, so that every family meets a visible test."""
        examples = self.hidden_examples if hidden else self.examples
        families = [family.name for family in self.inputs]
        return [self._case(example, example.get("inputs", families[index % len(families)]),
                           seeds[index % len(seeds)])
                for index, example in enumerate(examples)]

    def build_cases(self, seeds: tuple[int, ...], hidden: bool) -> tuple[Case, ...]:
        cases = self.explicit_cases(seeds, hidden)
        explicit = [(case.params, case.inputs) for case in cases]
        for index, (params, inputs) in enumerate(draw(self, seeds, explicit)):
            cases.append(self._case(params, inputs, seeds[(len(explicit) + index) % len(seeds)]))
        return tuple(cases)

    def in_domain(self, params: dict) -> bool:
        """Are these sizes in the domain (every size within its bounds, the joint limits met)?"""
        return all(size.allows(params[size.name]) for size in self.sizes) and bool(self.fits(params))

    def simpler(self, case: Case) -> list[Case]:
        """Smaller cases in the domain that cost no more to simulate, smallest first (by the product of their
        sizes): each size in turn set to its lowest value, halved towards it, and made one smaller (for a size
        with choices, the nearest allowed value below each); the same inputs family and seed."""
        params, found = case.params, []
        for size in self.sizes:
            value = params[size.name]
            proposed = (size.low, (value + size.low) // 2, value - 1)
            for smaller in dict.fromkeys(size.at_most(candidate) for candidate in proposed):
                candidate = {**params, size.name: smaller}
                if size.low <= smaller < value and self.in_domain(candidate) \
                        and self.cost(candidate) <= self.cost(params):
                    found.append(self._case(candidate, case.inputs, case.seed))
        return sorted(found, key=lambda small: (math.prod(small.params.values()), self.cost(small.params)))

    def profile_key(self, case: Case) -> str:
        """What the reference's counters depend on: the sizes (and launch, a function of them), and, where
        the values matter, the inputs and the seed."""
        key = ",".join(f"{name}={value}" for name, value in case.sizes)
        return key + (f",inputs={case.inputs},seed={case.seed}" if self.values_matter else "")


class CaseList(Sequence):
    """The cases of a contract for some seeds, built on first use (so that importing a part module does not
    import Hypothesis); a tuple in every other respect."""

    def __init__(self, contract: Contract, seeds: tuple[int, ...], hidden: bool):
        self.contract, self.seeds, self.hidden = contract, seeds, hidden
        self._cases: tuple[Case, ...] | None = None

    def _all(self) -> tuple[Case, ...]:
        if self._cases is None:
            self._cases = self.contract.build_cases(self.seeds, self.hidden)
        return self._cases

    def __getitem__(self, index):
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash((self.contract.name, self.seeds, self.hidden))

    def __repr__(self) -> str:
        return f"CaseList({self.contract.name!r}, seeds={self.seeds}, hidden={self.hidden})"


# ---------------------------------------------------------------------------------- drawing with Hypothesis

_DRAWING = threading.Lock()


def draw(contract: Contract, seeds: tuple[int, ...], skip=()) -> list[tuple[dict, str]]:
    """``contract.drawn`` (sizes, inputs family) pairs drawn by Hypothesis from the contract's domain, none of
    them in ``skip``."""
    return draw_sizes(contract.name, contract.sizes, [family.name for family in contract.inputs],
                      contract.fits, seeds, contract.drawn, skip)


def draw_sizes(key: str, sizes: Sequence[Size], families: Sequence[str], fits: Callable[[dict], bool],
               seeds: tuple[int, ...], count: int, skip=()) -> list[tuple[dict, str]]:
    """``count`` distinct (sizes, family) pairs drawn by Hypothesis, none of them in ``skip``: a pure function
    of ``key``, the domain and the seeds, the same in every process whatever else it has imported.

    Hypothesis draws lists of ``count`` cases; its first list is always its simplest (every size at its
    lowest), so the cases come from the lists after it, which take one run each of its engine."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st

    @st.composite
    def one_case(draw_value):
        params = {}
        for size in sizes:
            params[size.name] = draw_value(size.strategy(params))
        return params, draw_value(st.sampled_from(list(families)))

    found: list[tuple[dict, str]] = []
    lists = [0]

    @settings(database=None, max_examples=HYPOTHESIS_MAX_TRIES + 1, phases=[Phase.generate],
              derandomize=False, deadline=None, suppress_health_check=list(HealthCheck),
              verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False)
    @hypothesis_seed(zlib.crc32(f"{key}|{seeds}".encode()))
    @given(st.lists(one_case().filter(lambda drawn: fits(drawn[0])), min_size=count, max_size=count))
    def collect(drawn_cases):
        lists[0] += 1
        for drawn in drawn_cases if lists[0] > 1 else ():
            if drawn not in found and drawn not in skip and len(found) < count:
                found.append(drawn)
        if len(found) == count:
            raise _Enough

    with _DRAWING, _without_local_constants(), contextlib.suppress(_Enough):
        collect()
    return found


def warm_up_in_background() -> None:
    """Import Hypothesis and run its engine once, on a thread of its own: the first check of a notebook then
    draws its cases without paying for either (about half a second, on a laptop's core)."""
    def warm():
        draw_sizes("warm-up", (Size("n", 1, 8, 8),), ("any",), lambda params: True, (0,), 1)

    threading.Thread(target=warm, name="Hypothesis warm-up", daemon=True).start()


class _Enough(Exception):
    """Stops Hypothesis once enough distinct cases are drawn."""


@contextmanager
def _without_local_constants():
    """Hypothesis sometimes draws a constant it found in the source of the modules a process has imported
    (its "local constants"), so the same seed would draw different cases in a notebook, a grader's worker
    and its parent. Within the block it finds none, and its cache of them starts empty (both restored
    after)."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = Constants
    providers.CONSTANTS_CACHE = type(saved[1])(1024)
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved
