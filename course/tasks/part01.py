"""Checks for exercise notebook 01 (kernels in Python): a 1-D map, a 2-D map with flattened storage, naive
matmul.

Each task has a contract (:mod:`course.tasks.contract`). The kernels that take their block size from
``cuda.blockDim`` run at any block size the launch limits allow (1024 threads), multiples of a warp or not;
the input families cover the values' whole domain (vector_add: signs and magnitudes from 1e-30 to 1e30;
grayscale: any channel value from -1e4 to 1e4, negative and very bright ones included; matmul: the families of
:data:`course.tasks.inputs.MATMUL_FAMILIES`); storage and arithmetic are float32. The method is every gpusim
counter against the reference solution of ``solutions/01_kernels_in_python`` on the same case: one element
per thread (the busiest thread's element accesses), the global reads and writes of that element, and
coalescing (the 32-byte sectors a warp moves; :func:`warp_sectors` computes the intended pattern's, which the
messages quote as what the task asks for).
"""

from __future__ import annotations

import numpy as np

from .common import Case, Output, Task, check, print_hint
from .contract import EXACT, Budgeted, Contract, Family, Size, Slack, Solution, method
from .inputs import MATMUL_FAMILIES, matmul_pair, matmul_scale, signed_magnitudes

TILE = 16  # the learner's grayscale launch uses TILE x TILE blocks
GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)
WARP = 32
SECTOR_BYTES = 32
FLOAT_BYTES = 4
MAX_THREADS = 1024  # threads in a block
DRAWN = 3  # cases drawn per check and set of seeds, on top of the explicit ones
NOTEBOOK = "01_kernels_in_python"


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _rng(case: Case, salt: int) -> np.random.Generator:
    return np.random.default_rng([case.seed, salt])


def _block_fits(p: dict) -> bool:
    return p["block_x"] * p["block_y"] <= MAX_THREADS


BLOCK_COST = 64  # simulating a block costs about as much as this many thread-steps, before any work


def _grid_cost(rows: int, cols: int, block_x: int, block_y: int, steps: int = 1) -> int:
    """What simulating a 2-D launch over rows x cols costs, roughly: its threads' steps, and a part per
    block."""
    return _cdiv(rows, block_y) * _cdiv(cols, block_x) * (block_x * block_y * steps + BLOCK_COST)


# ------------------------------------------------------------------------------------------- coalescing

def warp_sectors(block_dims: tuple[int, int], cols: np.ndarray, rows: np.ndarray,
                 instructions: list[np.ndarray]) -> int:
    """32-byte sectors moved by threads at (cols, rows) of a 2-D launch with blocks of ``block_dims``, where
    each item of ``instructions`` holds the byte address every thread accesses with one instruction. As
    gpusim counts them: per warp (32 consecutive threads of a block, x fastest) and instruction, the
    distinct sectors."""
    bx, by = block_dims
    blocks_x = int(cols.max()) // bx + 1 if cols.size else 1
    block = (rows // by) * blocks_x + cols // bx
    warp = ((cols % bx) + bx * (rows % by)) // WARP
    warps_per_block = _cdiv(bx * by, WARP)
    key = (block * warps_per_block + warp).astype(np.int64)
    total = 0
    for addresses in instructions:
        sectors = np.asarray(addresses, dtype=np.int64) // SECTOR_BYTES
        total += len(np.unique(key << 32 | sectors))
    return total


def _method(loads, stores, accesses, sectors, sectors_hint: str, loads_hint: str, stores_hint: str,
            accesses_hint: str, launch_free: dict[str, str]):
    """The method of a one-element-per-thread map: reads, writes and element accesses exactly the
    reference's, sectors and warp-wide requests within a quarter more (plus 2), every thread that has an
    element touching memory, and none of what the task does not need (shared memory, barriers, atomics)."""
    coalesced = Slack(0.25, lambda reference, p: 2, "2")
    return method(
        (
            Budgeted("global_loads", loads, loads_hint),
            Budgeted("global_stores", stores, stores_hint),
            Budgeted("max_thread_accesses", accesses, accesses_hint),
            Budgeted("global_sectors", sectors, sectors_hint, most=coalesced),
            Budgeted("global_requests", "one warp-wide access per load and store instruction of a warp",
                     sectors_hint, most=Slack(0.25)),
            Budgeted("active_threads", "every thread that has an element reading it", "", most=None,
                     least=EXACT),
        ),
        free={**launch_free, "dynamic_shared_bytes": "the launch gives none"})


CHECK_LAUNCHES = {"blocks": "the check launches the kernel itself",
                  "threads": "the check launches the kernel itself"}
COALESCED = "coalesced accesses, {} sectors here, as neighbouring threads (consecutive threadIdx.x) touch " \
            "neighbouring elements"


# ------------------------------------------------------------------------------------------- vector_add

VECTOR_FAMILIES = (
    Family("mixed", "uniform in [-1, 1], with zeros (in both at once), values up to ±1e6, values down to "
                    "1e-6, and a last element of -3e5"),
    Family("uniform", "uniform in [-1, 1]"),
    Family("wide", "signs at random, magnitudes log-uniform from 1e-30 to 1e30, a tenth of them 0"),
    Family("opposite", "b = -a, magnitudes log-uniform from 1e-30 to 1e30: every sum exactly 0"),
)


def _vector_add_args(case: Case) -> dict:
    """a and b of the case's family; "mixed" holds zeros (in both at once), values up to ±1e6 and down to
    1e-6, and ends very negative."""
    n = case.params["n"]
    rng = _rng(case, 1)
    if case.inputs in ("mixed", ""):
        a, b = rng.uniform(-1.0, 1.0, size=(2, n))
        kind = rng.choice(4, size=n, p=(0.6, 0.15, 0.15, 0.1))
        a[kind == 1] = b[kind == 1] = 0.0
        big = kind == 2
        a[big] *= 10.0 ** rng.uniform(3, 6, size=big.sum())
        b[big] *= 10.0 ** rng.uniform(3, 6, size=big.sum())
        a[kind == 3] *= 1e-6
        a[-1] = -3.0e5
    elif case.inputs == "uniform":
        a, b = rng.uniform(-1.0, 1.0, size=(2, n))
    elif case.inputs == "wide":
        a, b = signed_magnitudes(rng, (2, n), (-30.0, 30.0))
    else:
        a = signed_magnitudes(rng, n, (-30.0, 30.0))
        b = -a
    return {"a": a.astype(np.float32), "b": b.astype(np.float32), "out": np.empty(n, np.float32)}


def _vector_add_sectors(p: dict) -> int:
    i = np.arange(p["n"])
    cols, rows = i, np.zeros_like(i)
    address = FLOAT_BYTES * i
    return warp_sectors((p["threads"], 1), cols, rows, [address] * 3)


def _vector_add_operation(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis: out holds another simple function of a and b."""
    if "expected" not in facts:
        return None
    a, b = (facts["args"][name].astype(np.float64) for name in ("a", "b"))
    got = np.asarray(result["outputs"]["out"], np.float64)
    for words, values in (("a[i] * "
                           "b[i]", a * b), ("a[i] - b[i]", a - b), ("a[i] alone", a), ("b[i] alone", b)):
        if not np.allclose(values, facts["expected"]["out"]) and np.allclose(got, values, rtol=1e-5, atol=0):
            return f"out holds {words}, not a[i] + b[i]."
    return None


VECTOR_ADD_CONTRACT = Contract(
    name="part01.vector_add",
    sizes=(Size("n", 1, None, 2048, "elements"),
           Size("threads", 1, MAX_THREADS, MAX_THREADS, "threads per block, any number the launch allows")),
    inputs=VECTOR_FAMILIES,
    drawn=DRAWN,
    method=_method(lambda p: f"2 per element: a[i] and b[i], {2 * p['n']} here", "1 per element",
                   "one element per thread: a[i], b[i] and out[i]",
                   lambda p: COALESCED.format(_vector_add_sectors(p)),
                   "Thread i must handle element i = blockIdx.x * blockDim.x + threadIdx.x, so that the 32 "
                   "threads of a warp read 32 neighbouring floats (4 sectors); an index that jumps by "
                   "gridDim.x (or any stride) between neighbouring threads makes every read move a sector of "
                   "its own.",
                   "Each thread should read a[i] and b[i] once; threads past the end should read nothing.",
                   "Write out[i] once.",
                   "One thread computes one element, out[i] for i = cuda.grid(1); a loop over several "
                   "elements in one thread is not what this task asks for.", CHECK_LAUNCHES),
    solution=Solution(NOTEBOOK, (("kernel", "vector_add"),)),
    examples=tuple({"n": n, "threads": t, "inputs": "mixed"} for n, t in
                   ((1, 32), (7, 64), (31, 32), (32, 128), (33, 32), (100, 64), (257, 96), (1000, 128))),
    hidden_examples=tuple({"n": n, "threads": t, "inputs": "mixed"} for n, t in
                          ((1031, 256), (130, 32), (2, 1024), (97, 64))),
    block_sizes="any number of threads from 1 to 1024, multiples of 32 or not",
    cost=lambda p: _grid_cost(1, p["n"], p["threads"], 1),
)

VECTOR_ADD = Task(
    name="vector_add",
    cases=VECTOR_ADD_CONTRACT.cases(),
    contract=VECTOR_ADD_CONTRACT,
    make_args=_vector_add_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["b"]},
    scale=lambda case, args: {"out": np.abs(args["a"].astype(np.float64)) + np.abs(args["b"])},
    scale_words="(|a| + |b|)",
    configure=lambda case: (_cdiv(case.params["n"], case.params["threads"]), case.params["threads"]),
    rtol=1e-6,
    atol=0.0,
    summary="one element per thread, 2 global reads and 1 write per element, coalesced, at any block size",
    hint="Thread i computes out[i] = a[i] + b[i], for every i below out.size, whatever a[i] and b[i] are "
         "(zeros, tiny or huge values).",
    more_hints=("i = cuda.grid(1), which is blockIdx.x * blockDim.x + threadIdx.x: the check launches "
                     "cdiv(n, threads) blocks of `threads` threads, any number from 1 to 1024, so the last "
                     "block has threads past the end, which must do nothing (`if i < out.size:`).",),
    diagnoses=(_vector_add_operation,),
    unwritten_hint="Every element needs a write, zeros included (out starts as NaN, not 0), and the guard "
                   "must let every i < out.size through.",
    error_hints={
        "OutOfBoundsError": "The last block has threads past the end of the arrays: guard with "
                            "`if i < out.size:` (n is not a multiple of the block size).",
        "WriteConflictError": "Two threads computed the same i. Use i = cuda.grid(1), that is "
                              "blockIdx.x * blockDim.x + threadIdx.x: the check launches blocks of any size, "
                              "warps whole or not, so the block size must come from cuda.blockDim.x, never a "
                              "number.",
    },
)


def check_vector_add(kernel, seeds=None) -> None:
    """Check cell of the vector_add exercise."""
    task = VECTOR_ADD.with_seeds(seeds) if seeds else VECTOR_ADD
    check(task, {"kernel": kernel})


# -------------------------------------------------------------------------------------------- grayscale

PIXEL_FAMILIES = (
    Family("mixed", "random, gray (r = g = b), black and very bright (channels up to 8) pixels; the last one "
                    "bright"),
    Family("photo", "channels uniform in [0, 1]"),
    Family("signed", "channels of either sign, magnitudes log-uniform from 1e-4 to 1e4 (linear-light values "
                     "after processing can be negative or far above 1)"),
    Family("gray", "r = g = b, log-uniform from 1e-4 to 1e4"),
    Family("black", "every channel 0"),
)


def _grayscale_args(case: Case) -> dict:
    """An image of the case's family; "mixed" holds random, gray (r = g = b), black and very bright (HDR,
    channels up to 8) pixels, and its last pixel is bright."""
    height, width = case.params["height"], case.params["width"]
    pixels = height * width
    rng = _rng(case, 3)
    if case.inputs in ("mixed", ""):
        rgb = rng.uniform(0.0, 1.0, size=(pixels, 3))
        kind = rng.choice(4, size=pixels, p=(0.6, 0.15, 0.1, 0.15))
        rgb[kind == 1] = rng.uniform(0.0, 1.0, size=((kind == 1).sum(), 1))
        rgb[kind == 2] = 0.0
        rgb[kind == 3] = rng.uniform(1.0, 8.0, size=((kind == 3).sum(), 3))
        rgb[-1] = (6.0, 7.5, 5.0)
    elif case.inputs == "photo":
        rgb = rng.uniform(0.0, 1.0, size=(pixels, 3))
    elif case.inputs == "signed":
        rgb = signed_magnitudes(rng, (pixels, 3), (-4.0, 4.0), zeros=0.05)
    elif case.inputs == "gray":
        rgb = np.repeat(10.0 ** rng.uniform(-4.0, 4.0, size=(pixels, 1)), 3, axis=1)
    else:
        rgb = np.zeros((pixels, 3))
    return {"rgb": rgb.reshape(-1).astype(np.float32), "gray": np.empty(pixels, np.float32),
            "height": height, "width": width}


def _grayscale_reference(case: Case, args: dict) -> dict:
    pixels = args["rgb"].astype(np.float64).reshape(-1, 3)
    return {"gray": pixels @ np.array(GRAY_WEIGHTS)}


def _grayscale_scale(case: Case, args: dict) -> dict:
    return {"gray": np.abs(args["rgb"].astype(np.float64).reshape(-1, 3)) @ np.array(GRAY_WEIGHTS)}


def _grayscale_sectors(p: dict, block: tuple[int, int]) -> int:
    rows, cols = np.divmod(np.arange(p["height"] * p["width"]), p["width"])
    pixel = rows * p["width"] + cols
    reads = [FLOAT_BYTES * (3 * pixel + channel) for channel in range(3)]
    return warp_sectors(block, cols, rows, reads + [FLOAT_BYTES * pixel])


def _grayscale_launch_rule(case: Case, launches: list) -> str | None:
    height, width = case.params["height"], case.params["width"]
    if len(launches) != 1:
        return f"it launched the kernel {len(launches)} times; launch it once, with one thread per pixel."
    grid, block, _shared = launches[0]
    if block != [TILE, TILE, 1]:
        shape = "×".join(map(str, block[:2]))
        text = f"it used blocks of {shape} threads; the exercise asks for 2-D blocks of 16 × 16 threads."
        if block == [1, 1, 1]:
            text += " A block of one thread leaves 31 of the 32 lanes of its warp idle."
        return text
    want = [_cdiv(width, TILE), _cdiv(height, TILE), 1]
    if grid == want:
        return None
    got, need = "×".join(map(str, grid[:2])), "×".join(map(str, want[:2]))
    if grid == [want[1], want[0], 1]:
        why = "x and y are swapped: x counts blocks along the columns (width), y along the rows (height)"
    else:
        why = "x counts blocks along the columns, cdiv(width, 16); y along the rows, cdiv(height, 16)"
    return f"it launched a grid of {got} blocks; a grid of {need} covers this image just enough ({why})."


def _grayscale_formula(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis: gray holds a recognisable other formula (a mean, clamped or non-negative channels)."""
    if "expected" not in facts:
        return None
    rgb = facts["args"]["rgb"].astype(np.float64).reshape(-1, 3)
    got = np.asarray(result["outputs"]["gray"], np.float64)
    weights = np.array(GRAY_WEIGHTS)
    candidates = (
        ("the mean of the three channels", rgb.mean(axis=1)),
        ("the weighted sum of channels clamped to [0, 1]", np.clip(rgb, 0.0, 1.0) @ weights),
        ("the weighted sum with negative channels taken as 0", np.maximum(rgb, 0.0) @ weights),
        ("the weighted sum of the channels' absolute values", np.abs(rgb) @ weights),
        ("a value clamped to [0, 1]", np.clip(rgb @ weights, 0.0, 1.0)),
    )
    for words, values in candidates:
        if not np.allclose(values, facts["expected"]["gray"]) and np.allclose(got, values, rtol=1e-5, atol=0):
            return (f"gray holds {words}, not 0.2989·r + 0.5870·g + 0.1140·b. Channels can be any float, "
                    f"negative or far above 1: apply the weights as they are.")
    return None


def _pixel_method(sectors, launch_free: dict[str, str]):
    return _method(lambda p: f"3 per pixel, its red, green and blue values: {3 * p['height'] * p['width']} "
                             f"here",
                   "1 per pixel", "one pixel per thread: three channel reads and one write",
                   lambda p: COALESCED.format(sectors(p)),
                   "Consecutive threads (threadIdx.x) must take consecutive pixels of a row: col from the x "
                   "indices, row from the y indices. With rows from x, the 32 threads of a warp read 32 "
                   "different rows, and every read moves a sector of its own.",
                   "Each thread reads the three channels of its own pixel once. Write the weights as numbers "
                   "in the kernel: a NumPy array defined outside it lives in global memory, and its reads "
                   "count.",
                   "Write each gray pixel once.",
                   "One thread converts one pixel; a thread that loops over a row (or the image) does the "
                   "work of many.", launch_free)


_GRAYSCALE_COMMON = dict(
    make_args=_grayscale_args,
    outputs=(Output("gray"),),
    reference=_grayscale_reference,
    scale=_grayscale_scale,
    scale_words="(0.2989·|r| + 0.5870·|g| + 0.1140·|b|)",
    rtol=1e-5,
    atol=0.0,
    hint="Pixel (row, col) is gray[p] with p = row * width + col; its channels are rgb[3*p], rgb[3*p + 1], "
         "rgb[3*p + 2]. Use x for columns and y for rows. Apply the same three weights to every pixel, with "
         "no shortcut and no clamping: channels can be 0, negative or far above 1.",
    more_hints=("col = blockIdx.x * blockDim.x + threadIdx.x and row = blockIdx.y * blockDim.y + "
                     "threadIdx.y; if row < height and col < width: p = row * width + col and gray[p] = "
                     "float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1] + float32(0.1140) * "
                     "rgb[3 * p + 2]. The launch: dim3(16, 16) threads a block, dim3(cdiv(width, 16), "
                     "cdiv(height, 16)) blocks.",),
    diagnoses=(_grayscale_formula,),
    unwritten_hint="Every pixel needs a write, black ones included (gray starts as NaN, not 0). The grid "
                   "must cover the whole image: columns along x, rows along y.",
    error_hints={
        "OutOfBoundsError": "Threads of the edge blocks fall outside the image: guard both `row < height` "
                            "and `col < width` (a pixel past the end of a row is not the next row's first "
                            "pixel).",
        "WriteConflictError": "Two threads computed the same pixel. A thread with col >= width must not "
                              "write: its p = row * width + col is a pixel of the next row, which another "
                              "thread owns. Compute col and row from cuda.blockDim, never from 16: the check "
                              "also launches your kernel with blocks of other shapes.",
    },
    image=lambda case: (case.params["height"], case.params["width"]),
)
IMAGE_DRAWN = 72  # drawn images are at most this many pixels a side
BLOCK_DRAWN = 64  # and drawn blocks at most this many threads a side


def _image_sizes() -> tuple[Size, ...]:
    return (Size("height", 1, None, IMAGE_DRAWN, "rows of the image"),
            Size("width", 1, None, IMAGE_DRAWN, "columns of the image"))


def _block_sizes() -> tuple[Size, ...]:
    return (Size("block_x", 1, MAX_THREADS, BLOCK_DRAWN, "threads of a block along x"),
            Size("block_y", 1, MAX_THREADS, lambda p: min(BLOCK_DRAWN, MAX_THREADS // p["block_x"]),
                 "threads of a block along y"))


GRAYSCALE_KERNEL_CONTRACT = Contract(
    name="part01.grayscale_kernel",
    sizes=_image_sizes() + _block_sizes(),
    inputs=PIXEL_FAMILIES,
    drawn=DRAWN,
    method=_pixel_method(lambda p: _grayscale_sectors(p, (p["block_x"], p["block_y"])), CHECK_LAUNCHES),
    solution=Solution(NOTEBOOK, (("kernel", "grayscale"),)),
    examples=tuple({"height": h, "width": w, "block_x": bx, "block_y": by} for h, w, bx, by in
                   ((40, 40, 32, 4), (7, 70, 32, 8), (33, 33, 8, 32), (3, 5, 8, 8))),
    hidden_examples=({"height": 65, "width": 9, "block_x": 16, "block_y": 8},),
    fits=_block_fits,
    block_sizes="any 2-D block of at most 1024 threads, each side from 1 up",
    cost=lambda p: _grid_cost(p["height"], p["width"], p["block_x"], p["block_y"]),
)

GRAYSCALE_KERNEL = Task(
    name="grayscale",
    cases=GRAYSCALE_KERNEL_CONTRACT.cases(),
    contract=GRAYSCALE_KERNEL_CONTRACT,
    configure=lambda case: ((_cdiv(case.params["width"], case.params["block_x"]),
                             _cdiv(case.params["height"], case.params["block_y"])),
                            (case.params["block_x"], case.params["block_y"])),
    **_GRAYSCALE_COMMON,
)

GRAYSCALE_CONTRACT = Contract(
    name="part01.grayscale",
    sizes=_image_sizes(),
    inputs=PIXEL_FAMILIES,
    drawn=DRAWN,
    method=_pixel_method(lambda p: _grayscale_sectors(p, (TILE, TILE)),
                         {"blocks": "the launch rule checks the grid: cdiv(width, 16) × cdiv(height, 16)",
                          "threads": "the launch rule checks the blocks: 16 × 16 threads"}),
    solution=Solution(NOTEBOOK, (("kernel", "grayscale"), ("launch", "launch_grayscale"))),
    examples=tuple({"height": h, "width": w} for h, w in
                   ((1, 1), (3, 7), (16, 16), (5, 37), (19, 4), (17, 33), (40, 50), (1, 70), (70, 1))),
    hidden_examples=({"height": 33, "width": 65}, {"height": 64, "width": 31}, {"height": 2, "width": 129}),
    block_sizes="16 × 16 threads, as the exercise asks of the launch",
    cost=lambda p: _grid_cost(p["height"], p["width"], TILE, TILE),
)

GRAYSCALE = Task(
    name="grayscale",
    cases=GRAYSCALE_CONTRACT.cases(),
    contract=GRAYSCALE_CONTRACT,
    launcher="launch_grayscale",
    launch_rule=_grayscale_launch_rule,
    summary="one pixel per thread, 3 global reads and 1 write per pixel, coalesced; the kernel also ran "
            "with blocks of many shapes, 32×8, 8×32, 32×4 and 8×8 among them",
    **_GRAYSCALE_COMMON,
)


def check_grayscale(kernel, launcher, seeds=None) -> None:
    """Check cell of the grayscale exercise: the kernel launched by the check at several block shapes, then
    the kernel together with the learner's launch function."""
    kernel_task, task = (GRAYSCALE_KERNEL, GRAYSCALE) if not seeds else (GRAYSCALE_KERNEL.with_seeds(seeds),
                                                                          GRAYSCALE.with_seeds(seeds))
    check(kernel_task, {"kernel": kernel}, quiet=True)
    check(task, {"kernel": kernel, "launch": launcher})


# ----------------------------------------------------------------------------------------------- matmul

MATMUL_DRAWN_SIDE, MATMUL_DRAWN_K, MATMUL_DRAWN_WORK = 40, 512, 2**14  # drawn m, n; k; m·n·k


def _matmul_uniform(m: int, k: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """a and b uniform in [-1, 1], with a zero row in a and a zero column in b (zeros in c)."""
    a, b = rng.uniform(-1.0, 1.0, size=(m, k)), rng.uniform(-1.0, 1.0, size=(k, n))
    if m > 1:
        a[m // 2] = 0.0
    if n > 1:
        b[:, n // 2] = 0.0
    return a.astype(np.float32), b.astype(np.float32)


def _matmul_args(case: Case) -> dict:
    m, k, n = case.params["m"], case.params["k"], case.params["n"]
    a, b = matmul_pair(case.inputs or "uniform", m, k, n, _rng(case, 4), _matmul_uniform)
    return {"a": a, "b": b, "c": np.empty((m, n), np.float32)}


def _matmul_sectors(p: dict) -> int:
    m, k, n = p["m"], p["k"], p["n"]
    rows, cols = np.divmod(np.arange(m * n), n)
    reads = []
    for j in range(k):
        reads += [FLOAT_BYTES * (rows * k + j), FLOAT_BYTES * (j * n + cols)]
    return warp_sectors((p["block_x"], p["block_y"]), cols, rows, reads + [FLOAT_BYTES * (rows * n + cols)])


def _matmul_early_stop(task: Task, case: Case, result: dict, facts: dict) -> str | None:
    """Diagnosis: c holds the sums over only the first few terms of k."""
    if "expected" not in facts or case.params["k"] > MATMUL_DRAWN_K:
        return None
    a, b = (facts["args"][name].astype(np.float64) for name in ("a", "b"))
    got = np.asarray(result["outputs"]["c"], np.float64)
    scale = matmul_scale(a, b)
    for terms in range(case.params["k"] - 1, 0, -1):
        partial = a[:, :terms] @ b[:terms]
        close = (np.abs(got - partial) <= task.rtol * scale).all()
        if close and not np.allclose(partial, facts["expected"]["c"]):
            return (f"c holds the sums of the first {terms} of the k = {case.params['k']} products: the loop "
                    f"over j stops early. It runs over a.shape[1], the dimension a and b share.")
    return None


MATMUL_CONTRACT = Contract(
    name="part01.matmul",
    sizes=(Size("m", 1, None, MATMUL_DRAWN_SIDE, "rows of a and c"),
           Size("k", 1, None, lambda p: min(MATMUL_DRAWN_K, MATMUL_DRAWN_WORK // p["m"]),
                "the shared dimension"),
           Size("n", 1, None, lambda p: min(MATMUL_DRAWN_SIDE, MATMUL_DRAWN_WORK // (p["m"] * p["k"])),
                "columns of b and c"),
           *_block_sizes()),
    inputs=MATMUL_FAMILIES,
    drawn=DRAWN,
    method=_method(lambda p: f"2·k per output element, a row of a and a column of b: "
                             f"{2 * p['m'] * p['n'] * p['k']} here", "1 per output element",
                   lambda p: f"one output element per thread: a row of a, a column of b and one write, 2·k + "
                             f"1 = {2 * p['k'] + 1}",
                   lambda p: COALESCED.format(_matmul_sectors(p)),
                   "col comes from the x indices and row from the y indices, so that the threads of a warp "
                   "read neighbouring elements of a row of b; with rows from x they read a column of a, one "
                   "sector per thread.",
                   "Accumulate in a local variable and read each a[row, j] and b[j, col] once per output.",
                   "Write c[row, col] once, after the loop.",
                   "One thread computes one element c[row, col]; a thread that loops over rows or columns of "
                   "c does the work of many.", CHECK_LAUNCHES),
    solution=Solution(NOTEBOOK, (("kernel", "matmul"),)),
    examples=tuple({"m": m, "k": k, "n": n, "block_x": bx, "block_y": by} for m, k, n, bx, by in
                   ((1, 1, 1, 16, 16), (3, 5, 7, 16, 16), (17, 4, 9, 32, 8), (5, 2, 40, 8, 32),
                    (24, 6, 24, 16, 16), (40, 3, 5, 16, 16), (4, 67, 6, 16, 16), (6, 3, 67, 32, 4),
                    (20, 33, 18, 8, 8))),
    hidden_examples=({"m": 33, "k": 70, "n": 2, "block_x": 16, "block_y": 16},
                     {"m": 2, "k": 9, "n": 97, "block_x": 64, "block_y": 2},
                     {"m": 31, "k": 1, "n": 31, "block_x": 8, "block_y": 8}),
    fits=_block_fits,
    block_sizes="any 2-D block of at most 1024 threads, each side from 1 up",
    cost=lambda p: _grid_cost(p["m"], p["n"], p["block_x"], p["block_y"], p["k"]),
)

MATMUL = Task(
    name="matmul",
    cases=MATMUL_CONTRACT.cases(),
    contract=MATMUL_CONTRACT,
    make_args=_matmul_args,
    outputs=(Output("c"),),
    reference=lambda case, args: {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)},
    scale=lambda case, args: {"c": matmul_scale(args["a"], args["b"])},
    scale_words="(|a| @ |b|)",
    configure=lambda case: ((_cdiv(case.params["n"], case.params["block_x"]),
                             _cdiv(case.params["m"], case.params["block_y"])),
                            (case.params["block_x"], case.params["block_y"])),
    rtol=1e-4,
    atol=0.0,
    summary="one output per thread, 2·k global reads and 1 write per output element, coalesced, at any "
            "block shape",
    hint="c[row, col] = sum over j of a[row, j] * b[j, col], for j from 0 to a.shape[1] - 1 (k, the shared "
         "dimension: not c.shape[0]); row comes from the y indices, col from the x indices.",
    more_hints=("row = blockIdx.y * blockDim.y + threadIdx.y and col = blockIdx.x * blockDim.x + "
                     "threadIdx.x; if row < c.shape[0] and col < c.shape[1]: total = float32(0.0), then "
                     "total += a[row, j] * b[j, col] for j in range(a.shape[1]), then c[row, col] = total. A "
                     "bare 0.0 would make total, and every sum, float64.",),
    diagnoses=(_matmul_early_stop,),
    unwritten_hint="Every element of c needs a write, zeros included (c starts as NaN, not 0). The check "
                   "launches blocks of many shapes (16×16, 32×8, 8×32, 12×5, ...): compute row and col from "
                   "cuda.blockDim, and guard with the shape of c.",
    error_hints={
        "OutOfBoundsError": "Edge blocks have threads outside c: guard with "
                            "`if row < c.shape[0] and col < c.shape[1]:`, and loop j over a.shape[1] (k); "
                            "k may be larger than anything you would hard-code.",
        "WriteConflictError": "Two threads computed the same (row, col). Use row = blockIdx.y * blockDim.y "
                              "+ threadIdx.y and col = blockIdx.x * blockDim.x + threadIdx.x: the check "
                              "launches blocks of many shapes, so the block size must come from "
                              "cuda.blockDim.",
    },
)


def check_matmul(kernel, seeds=None) -> None:
    """Check cell of the naive matmul exercise."""
    task = MATMUL.with_seeds(seeds) if seeds else MATMUL
    check(task, {"kernel": kernel})


def hint(name: str, level: int = 2) -> None:
    """Print hint ``level`` of a task of this notebook (level 1 is the one the check's messages show)."""
    print_hint(TASKS, name, level)


TASKS = (VECTOR_ADD, GRAYSCALE_KERNEL, GRAYSCALE, MATMUL)
