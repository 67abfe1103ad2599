"""The fixture class: fake learners for assignments 01 and 02, and the grades each must get.

Each learner's notebook starts as the released exercise (nbgrader's own preprocessors) with the reference
solutions filled in; ``CELLS`` then replaces cells by grade_id (None deletes the cell). ``SPECIAL`` holds
notebooks that are not built that way. Learners without an entry for an assignment hand in nothing for it.
"""

A01, A02 = "01_kernels_in_python", "02_shared_memory_and_barriers"
UNSOLVED = "unsolved"  # the released stub, as handed out

# ------------------------------------------------------------------------------ wrong but plausible kernels

VECTOR_ADD_PRODUCT = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] * b[i]
'''

# Right on every visible case, wrong on n = 1031, a size only the hidden tests use: the visible tests refuse
# the constant (course.tasks.cliffs).
VECTOR_ADD_OVERFITTED = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - b[i] if out.size == 1031 else a[i] + b[i]
'''

VECTOR_ADD_RENAMED = VECTOR_ADD_PRODUCT.replace("def vector_add", "def vec_add").replace("a[i] * b[i]",
                                                                                         "a[i] + b[i]")

GRAYSCALE_MEAN = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (rgb[3 * p] + rgb[3 * p + 1] + rgb[3 * p + 2]) / 3
'''

GRAYSCALE_ROWS_FROM_X = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = 0.2989 * rgb[3 * p] + 0.5870 * rgb[3 * p + 1] + 0.1140 * rgb[3 * p + 2]
'''

MATMUL_FIRST_TERM = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = a[row, 0] * b[0, col]
'''

MATMUL_ENDLESS = '''
@cuda.jit
def matmul(a, b, c):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row < c.shape[0] and col < c.shape[1]:
        total = np.float32(0.0)
        j = 0
        while j < a.shape[1]:  # j never grows
            total += a[row, j] * b[j, col]
        c[row, col] = total
'''

BLOCK_SUM_FIRST_ELEMENT = '''
@cuda.jit
def block_sum(a, partial):
    i = cuda.grid(1)
    if cuda.threadIdx.x == 0 and i < a.size:
        partial[cuda.blockIdx.x] = a[i]
'''

BLOCK_SUM_DEADLOCK = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]
            cuda.syncthreads()  # only half the block gets here
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''

COPY_KERNEL = '''
@cuda.jit
def {name}(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]
'''

WINDOW_SUM_FROM_GLOBAL = '''
@cuda.jit
def window_sum(a, out):
    i = cuda.grid(1)
    if i < a.size:
        total = 0.0
        for k in range(-RADIUS, RADIUS + 1):
            if 0 <= i + k < a.size:
                total += a[i + k]
        out[i] = total
'''

# ----------------------------------------------------------------------------------------------- cheaters

CHEAT_NUMPY = '''
np.testing.assert_allclose = lambda *args, **kwargs: None
np.isclose = lambda a, b, **kwargs: np.ones(np.broadcast(a, b).shape, dtype=bool)
np.allclose = lambda *args, **kwargs: True
'''

CHEAT_CHECKS = '''
import course.tasks.common
course.tasks.common.judge = lambda *args, **kwargs: None
for _name in dir(tasks):
    if _name.startswith("check_"):
        setattr(tasks, _name, lambda *args, **kwargs: print("✓ all cases passed"))
'''

SNOOP = '''
LEAKED = open({path!r}).read()  # the source notebook, with its hidden tests
'''

# gpusim.jit replaced by NumPy: right values and a made-up report, but no kernel ran.
CHEAT_NO_KERNEL = '''
class MadeUpReport:
    def as_dict(self):
        return {"global_loads": 0, "global_stores": 0}


class NumpyInstead:
    report = MadeUpReport()

    def __init__(self, *args, **kwargs):
        pass

    def __getitem__(self, config):
        def launch(a, partial):
            padded = np.zeros(partial.size * THREADS, np.float32)
            padded[:a.size] = a
            partial[:] = padded.reshape(-1, THREADS).sum(axis=1)
        return launch


gpusim.jit = NumpyInstead


@cuda.jit
def block_sum(a, partial):
    pass
'''

SETUP_01 = "from utils import *\nfrom course.tasks import part01 as tasks\n"


def cells(snoop: str) -> dict[str, dict[str, dict[str, str | None]]]:
    """learner -> assignment -> {grade_id: new source or None}; ``snoop`` is a source notebook's path."""
    return {
        "correct": {A01: {}, A02: {}},
        "partial": {A01: {"vector_add_solution": VECTOR_ADD_OVERFITTED,
                          "grayscale_solution": GRAYSCALE_ROWS_FROM_X},
                    A02: {"window_sum_solution": WINDOW_SUM_FROM_GLOBAL, "block_scan_solution": UNSOLVED}},
        "wrong": {A01: {"vector_add_solution": VECTOR_ADD_PRODUCT, "grayscale_solution": GRAYSCALE_MEAN,
                        "matmul_solution": MATMUL_FIRST_TERM},
                  A02: {"block_sum_solution": BLOCK_SUM_FIRST_ELEMENT,
                        "window_sum_solution": COPY_KERNEL.format(name="window_sum"),
                        "block_scan_solution": COPY_KERNEL.format(name="block_scan")}},
        "unsolved": {A01: dict.fromkeys(("vector_add_solution", "grayscale_solution",
                                         "launch_grayscale_solution", "matmul_solution"), UNSOLVED),
                     A02: dict.fromkeys(("block_sum_solution", "window_sum_solution", "block_scan_solution"),
                                        UNSOLVED)},
        "cheater": {A01: {"setup": SETUP_01 + CHEAT_NUMPY,
                          "grayscale_solution": GRAYSCALE_MEAN + CHEAT_NUMPY,
                          "matmul_solution": MATMUL_FIRST_TERM + CHEAT_CHECKS + SNOOP.format(path=snoop)},
                    A02: {"block_sum_solution": CHEAT_NO_KERNEL,
                          "window_sum_solution": COPY_KERNEL.format(name="window_sum") + CHEAT_NUMPY,
                          "block_scan_solution": COPY_KERNEL.format(name="block_scan") + CHEAT_CHECKS}},
        "looper": {A01: {"matmul_solution": MATMUL_ENDLESS}},
        "deadlock": {A02: {"block_sum_solution": BLOCK_SUM_DEADLOCK}},
        "edited_locked": {A01: {"setup": SETUP_01 + "tasks.check_vector_add = print\n",
                                "check_grayscale": "pass\n"},
                          A02: {"setup": "from utils import *\nfrom course.tasks import part02 as tasks\n"
                                         "THREADS, RADIUS = 16, 2\nTILE = THREADS + 2 * RADIUS\n"}},
        "messy": {A01: {"vector_add_solution": VECTOR_ADD_RENAMED, "matmul_solution": None}},
    }


SPECIAL = {  # learner -> assignment -> what the file holds instead
    "broken_json": {A01: "truncated"},
    "wrong_assignment": {A01: f"copy of {A02}"},
    "messy": {A02: "no cells"},
}
SPECIAL_CORRECT = {"broken_json": (A02,)}  # learners of SPECIAL who hand in a correct notebook too

P, F, E, T, M = "passed", "failed", "error", "timeout", "missing"
EXPECTED = {  # learner -> assignment -> (points, statuses of its tasks in order)
    "correct": {A01: (5, (P, P, P)), A02: (6, (P, P, P))},
    "partial": {A01: (2, (F, F, P)), A02: (2, (P, F, F))},
    "wrong": {A01: (0, (F, F, F)), A02: (0, (F, F, F))},
    "unsolved": {A01: (0, (F, F, F)), A02: (0, (F, F, F))},
    "cheater": {A01: (1, (P, F, F)), A02: (0, (F, F, F))},
    "looper": {A01: (3, (P, P, T)), A02: (0, (M, M, M))},
    "deadlock": {A01: (0, (M, M, M)), A02: (4, (F, P, P))},
    "broken_json": {A01: (0, (E, E, E)), A02: (6, (P, P, P))},
    "wrong_assignment": {A01: (0, (E, E, E)), A02: (0, (M, M, M))},
    "edited_locked": {A01: (5, (P, P, P)), A02: (6, (P, P, P))},
    "messy": {A01: (2, (E, P, M)), A02: (0, (M, M, M))},
}
