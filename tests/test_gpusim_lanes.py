"""gpusim.lanes against plain scalars: a vector operation gives, lane by lane, what the per-thread engine gets
by running the same Python on one lane's scalars: the same type (Python int, float, bool or NumPy scalar), the
same bits (-0.0 is not 0.0; any NaN equals any NaN, payloads are not compared), and an exception wherever some
lane's scalar operation raises. Refusing with `lanes.Bail` is always allowed, except for the COMMON cases.

How it checks one case (an operator or function, the operand types, a layout of Lanes and uniform scalars):
every lane's expected result comes from the scalar operation (NumPy 2 semantics, warnings ignored); the whole
domain (raising lanes included) must raise if any lane raises; each raising kind is also planted alone among
clean lanes; the clean lanes are checked in shuffled groups of 16, and a group that Bails is split in halves
until the lanes that Bail are found, so one awkward value never hides the others.

Checked in one seeded run, with the lane values of VALUES and up to 6 uniform scalars per pair and layout:
- 5,229 combinations of operation, operand types and layout: binary operators 19 x 81 type pairs x 3 layouts
  = 4,617; lanes.call(min|max, x, y) 2 x 81 x 3 = 486; unary operators 3 x 9 types = 27; lanes.call of one
  argument 11 x 9 = 99;
- 18,306 cases (one per uniform scalar drawn), 339,351 lane results, of which 71,908 raise; without a
  Bail that is 38,106 vector operations (a Bail adds the operations that find its lanes);
- COMMON: 106 combinations x 3 layouts, 32 lanes each, that must not Bail; truth() on every type.
"""

import math
import operator
import random
import warnings
from contextlib import contextmanager

import numpy as np
import pytest

from gpusim import lanes
from gpusim.gpumath import math_module

SEED = 17
GROUP = 16  # clean lanes per vector operation
PLANTED_PER_KIND = 2  # raising lanes planted alone among clean lanes, per exception type

INF, NAN = math.inf, math.nan
INTS = [0, 1, -1, 3, -7, 255, 256, 2**31 - 1, -(2**31), 2**40, 2**63 - 1, -(2**63), 2**64]
FLOATS = [0.0, -0.0, 1.0, -1.0, 3.0, -7.5, 0.1, 0.5, 1e-45, 1e-310, 2.0**40, 1e38, 3.4e38, 1e308,
          INF, -INF, NAN]
FLOAT32S = [0.0, -0.0, 1.0, -1.0, 3.0, -7.5, 0.1, 0.5, 1e-45, 1e-40, 2.0**24 + 2, 2.0**40, 1e38, 3.4e38,
            INF, -INF, NAN]
VALUES = {
    int: INTS,
    float: FLOATS,
    bool: [False, True],
    np.float32: [np.float32(v) for v in FLOAT32S],
    np.float64: [np.float64(v) for v in FLOATS],
    np.int32: [np.int32(v) for v in (0, 1, -1, 3, -7, 255, 2**31 - 1, -(2**31))],
    np.int64: [np.int64(v) for v in (0, 1, -1, 3, -7, 2**31 - 1, -(2**31), 2**40, 2**63 - 1, -(2**63))],
    np.uint8: [np.uint8(v) for v in (0, 1, 3, 7, 128, 255)],
    np.bool_: [np.False_, np.True_],
}
TYPES = list(VALUES)

COMPARISONS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
               ">=": operator.ge}
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
          "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift, **COMPARISONS}
UNARY = {"-x": operator.neg, "+x": operator.pos, "~x": operator.invert}
CALLS_OF_ONE = {"abs": abs, "int": int, "float": float, "bool": bool, "np.float32": np.float32,
                "np.int32": np.int32, "np.int64": np.int64, "exp": math_module.exp, "sqrt": math_module.sqrt,
                "log": math_module.log, "floor": math_module.floor}
CALLS_OF_TWO = {"min": min, "max": max}

LAYOUTS = {"Lanes op Lanes": ("lanes", "lanes"), "Lanes op scalar": ("lanes", "uniform"),
           "scalar op Lanes": ("uniform", "lanes")}


class Raised:
    """The exception that a scalar operation raised (expected) or a vector operation raised (got)."""

    def __init__(self, error):
        self.error = error

    def __repr__(self):
        return f"raises {type(self.error).__name__}: {self.error}"


class Bailed(Raised):
    """The vector operation refused with lanes.Bail."""

    def __repr__(self):
        return f"Bail({self.error})"


@contextmanager
def quiet_numpy():
    """NumPy's overflow and invalid-value warnings off, for the scalar side and the vector side alike."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def too_big(function, args):
    """Python int ** or << with a huge right operand: an exact answer of gigabytes, so not in the domain."""
    return (function in (operator.pow, operator.lshift) and all(type(a) in (int, bool) for a in args)
            and abs(args[1]) > 64)


def scalar_result(function, args):
    """What the per-thread engine gets: the value, or Raised."""
    try:
        return function(*args)
    except Exception as error:
        return Raised(error)


def vector_result(function, layout, lane_args):
    """`function` applied to Lanes built from lane_args (one tuple of scalars per lane; "uniform" positions
    take lane 0's scalar): the list of per-lane scalars, Bailed or Raised."""
    try:
        args = [lanes.from_scalars([lane[position] for lane in lane_args]) if kind == "lanes"
                else lane_args[0][position] for position, kind in enumerate(layout)]
        result = function(*args)
        return lanes.to_scalars(result) if isinstance(result, lanes.Lanes) else [result] * len(lane_args)
    except lanes.Bail as error:
        return Bailed(error)
    except Exception as error:
        return Raised(error)


def same(expected, got):
    """Same type and same bits, NaN matching NaN."""
    if type(expected) is not type(got):
        return False
    if isinstance(expected, complex):
        return same(expected.real, got.real) and same(expected.imag, got.imag)
    if isinstance(expected, (float, np.floating)):
        both_nan = expected != expected and got != got
        return both_nan or np.array(expected).tobytes() == np.array(got).tobytes()
    return expected == got


def describe(value):
    return repr(value) if isinstance(value, Raised) else f"{value!r} ({type(value).__name__})"


def shorten(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "..."


class Checker:
    """Runs cases, and keeps the mismatches and the counts."""

    def __init__(self, name):
        self.name = name
        self.mismatches = []
        self.cases = self.lanes_compared = self.lanes_bailed = self.vector_operations = 0

    def run(self, function, layout, lane_args, label, rng):
        """Check one case: `function` over the lanes lane_args (one tuple of arguments per lane)."""
        self.cases += 1
        lane_args = [args for args in lane_args if not too_big(function, args)]
        with quiet_numpy():
            expected = [scalar_result(function, args) for args in lane_args]
        raising = [i for i, value in enumerate(expected) if isinstance(value, Raised)]
        clean = [i for i, value in enumerate(expected) if not isinstance(value, Raised)]
        rng.shuffle(clean)
        if raising:
            self.expect_raise(function, layout, lane_args, raising[0], expected, label)
            for i in self.planted(raising, expected):
                at = rng.randrange(min(len(clean), GROUP - 1) + 1)
                group = clean[:at] + [i] + clean[at:GROUP - 1]
                self.expect_raise(function, layout, [lane_args[j] for j in group], at,
                                  [expected[j] for j in group], label)
        for start in range(0, len(clean), GROUP):
            group = clean[start:start + GROUP]
            self.expect_values(function, layout, [lane_args[i] for i in group], [expected[i] for i in group],
                               label)

    @staticmethod
    def planted(raising, expected):
        """A few raising lanes of each exception type."""
        kinds = {}
        for i in raising:
            kinds.setdefault(type(expected[i].error), []).append(i)
        return [i for same_kind in kinds.values() for i in same_kind[:PLANTED_PER_KIND]]

    def expect_raise(self, function, layout, lane_args, lane, expected, label):
        self.vector_operations += 1
        with quiet_numpy():
            got = vector_result(function, layout, lane_args)
        if not isinstance(got, Raised):
            self.mismatches.append(f"{label}: lane {lane} of {len(lane_args)}, args {lane_args[lane]!r}, "
                                   f"{expected[lane]!r}, but the vector operation returned "
                                   f"{shorten(describe(got[lane]))} there")

    def expect_values(self, function, layout, lane_args, expected, label, may_bail=True):
        """Compare lane by lane; on Bail, split the lanes in halves to find the ones that Bail."""
        self.vector_operations += 1
        with quiet_numpy():
            got = vector_result(function, layout, lane_args)
        if isinstance(got, Bailed) and may_bail:
            if len(lane_args) == 1:
                self.lanes_bailed += 1
                return
            half = len(lane_args) // 2
            for part in (slice(None, half), slice(half, None)):
                self.expect_values(function, layout, lane_args[part], expected[part], label)
            return
        if not isinstance(got, list) or len(got) != len(expected):
            self.mismatches.append(f"{label}: over {len(lane_args)} lanes the vector operation "
                                   f"{shorten(describe(got))}, where no lane raises (lane 0: args "
                                   f"{lane_args[0]!r} gives {describe(expected[0])})")
            return
        self.lanes_compared += len(expected)
        for lane, (args, want, have) in enumerate(zip(lane_args, expected, got, strict=True)):
            if not same(want, have):
                self.mismatches.append(f"{label}: lane {lane} of {len(lane_args)}, args {args!r}: expected "
                                       f"{describe(want)}, got {shorten(describe(have))}")

    def assert_clean(self):
        shown = "\n".join(self.mismatches[:40])
        more = f"\n... and {len(self.mismatches) - 40} more" if len(self.mismatches) > 40 else ""
        assert not self.mismatches, f"{self.name}: {len(self.mismatches)} mismatches\n{shown}{more}"


def type_name(kind):
    return kind.__name__ if kind.__module__ == "builtins" else f"np.{kind.__name__}"


def check_two_operands(checker, function, name, rng, uniform_draws=6):
    """Every pair of operand types, in the three layouts."""
    for left in TYPES:
        for right in TYPES:
            pairs = [(a, b) for a in VALUES[left] for b in VALUES[right]]
            label = f"{name} on {type_name(left)}, {type_name(right)}"
            checker.run(function, LAYOUTS["Lanes op Lanes"], pairs, f"{label} [Lanes op Lanes]", rng)
            for b in rng.sample(VALUES[right], min(uniform_draws, len(VALUES[right]))):
                checker.run(function, LAYOUTS["Lanes op scalar"], [(a, b) for a in VALUES[left]],
                            f"{label} [Lanes op scalar {b!r}]", rng)
            for a in rng.sample(VALUES[left], min(uniform_draws, len(VALUES[left]))):
                checker.run(function, LAYOUTS["scalar op Lanes"], [(a, b) for b in VALUES[right]],
                            f"{label} [scalar {a!r} op Lanes]", rng)


def call_of(function):
    def vector_or_scalar_call(*args):
        if any(isinstance(a, lanes.Lanes) for a in args):
            return lanes.call(function, *args)
        return function(*args)
    return vector_or_scalar_call


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_operator_matches_scalars(name):
    checker = Checker(f"operator {name}")
    check_two_operands(checker, BINARY[name], name, random.Random(f"{SEED} {name}"))
    checker.assert_clean()


@pytest.mark.parametrize("name", list(CALLS_OF_TWO))
def test_call_of_two_matches_scalars(name):
    checker = Checker(f"lanes.call({name}, x, y)")
    check_two_operands(checker, call_of(CALLS_OF_TWO[name]), f"call {name}", random.Random(f"{SEED} {name}"))
    checker.assert_clean()


@pytest.mark.parametrize("name", list(UNARY) + list(CALLS_OF_ONE))
def test_unary_matches_scalars(name):
    function = UNARY[name] if name in UNARY else call_of(CALLS_OF_ONE[name])
    checker = Checker(name)
    rng = random.Random(f"{SEED} {name}")
    for kind in TYPES:
        checker.run(function, ("lanes",), [(a,) for a in VALUES[kind]], f"{name} on {type_name(kind)}", rng)
    checker.assert_clean()


def test_truth_matches_bool():
    """lanes.truth gives bool() of each lane as a NumPy bool array (after a Bail: lane by lane)."""
    mismatches = []
    for kind in TYPES:
        for group in [VALUES[kind], *([v] for v in VALUES[kind])]:
            try:
                got = lanes.truth(lanes.from_scalars(group))
            except lanes.Bail:
                continue
            expected = [bool(v) for v in group]
            if got.dtype != np.bool_ or got.tolist() != expected:
                mismatches.append(f"truth of {type_name(kind)} lanes {group}: expected {expected}, "
                                  f"got {got!r}")
            if len(group) > 1:
                break
    assert not mismatches, "\n".join(mismatches)


# The fast path: these must give exact results without Bail, in all three layouts, on a warp of 32 lanes.
WARP = 32
ARITHMETIC = ("+", "-", "*", "/")
INTEGER_ARITHMETIC = ("+", "-", "*", "//", "%")
COMMON_VALUES = {
    np.float32: [np.float32(v) for v in (0.0, 1.5, -2.25, 3.0, 1e-3, 100.0, -0.5, 7.0)],
    float: [0.0, 0.5, -1.25, 2.0, 1e-3, 3.0, 7.0],
    int: [0, 1, 2, 3, -5, 7, 12, 100],
    np.int32: [np.int32(v) for v in (0, 1, 2, -3, 5, 100, 1023)],
    np.bool_: [np.False_, np.True_],
}
COMMON = [
    *[(op, np.float32, np.float32) for op in (*ARITHMETIC, *COMPARISONS)],
    *[(op, a, b) for other in (int, float) for a, b in ((np.float32, other), (other, np.float32))
      for op in (*ARITHMETIC, *COMPARISONS)],
    *[(op, int, int) for op in (*INTEGER_ARITHMETIC, *COMPARISONS)],
    *[(op, a, b) for a, b in ((int, float), (float, int)) for op in (*ARITHMETIC, *COMPARISONS)],
    *[(op, a, b) for a, b in ((np.int32, int), (int, np.int32))
      for op in (*INTEGER_ARITHMETIC, *COMPARISONS)],
    *[(op, np.bool_, np.bool_) for op in ("&", "==", "!=")],
]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_common_cases_do_not_bail(layout):
    checker = Checker(f"common cases, {layout}")
    rng = random.Random(f"{SEED} common {layout}")
    left_kind, right_kind = LAYOUTS[layout]
    for name, left, right in COMMON:
        divides = name in ("/", "//", "%")
        right_values = [v for v in COMMON_VALUES[right] if v != 0] if divides else COMMON_VALUES[right]
        left_lanes = rng.choices(COMMON_VALUES[left], k=WARP)
        right_lanes = rng.choices(right_values, k=WARP)
        if left_kind == "uniform":
            left_lanes = [left_lanes[0]] * WARP
        if right_kind == "uniform":
            right_lanes = [right_lanes[0]] * WARP
        lane_args = list(zip(left_lanes, right_lanes, strict=True))
        with quiet_numpy():
            expected = [scalar_result(BINARY[name], args) for args in lane_args]
        label = f"{name} on {type_name(left)}, {type_name(right)} [{layout}]"
        checker.expect_values(BINARY[name], LAYOUTS[layout], lane_args, expected, label, may_bail=False)
    checker.assert_clean()
