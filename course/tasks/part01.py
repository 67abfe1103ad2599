"""Checks for exercise notebook 01 (kernels in Python): a 1-D map, a 2-D map with flattened storage, naive
matmul.

Each task states its method as budgets on gpusim's counters: one element per thread (the busiest thread's
element accesses), the global reads and writes of that element, and coalescing (the 32-byte sectors a warp
moves, against the sectors of the intended pattern, computed here by :func:`warp_sectors`). The kernels run
at several block sizes (an index that hard-codes the block size fails), on inputs with zeros, gray, black and
very bright pixels, and on shapes in which each dimension in turn is the largest.
"""

from __future__ import annotations

import numpy as np

from .common import Budget, Case, Output, Task, check, make_cases

TILE = 16  # the learner's grayscale launch uses TILE x TILE blocks
GRAY_WEIGHTS = (0.2989, 0.5870, 0.1140)
WARP = 32
SECTOR_BYTES = 32
FLOAT_BYTES = 4


def _cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def _rng(case: Case, salt: int) -> np.random.Generator:
    return np.random.default_rng([case.seed, salt])


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


def _sector_budget(rule: str, hint: str, intended) -> Budget:
    """A coalescing budget: at most a quarter more sectors than the intended pattern moves (plus 2)."""
    what = "sector transfers of global memory (32 bytes each, counted per warp-wide access)"
    return Budget("global_sectors", lambda p: intended(p) * 5 // 4 + 2, what, rule, hint)


SECTOR_RULE = ("a quarter more than the coalesced pattern moves, {}, in which neighbouring threads "
               "(consecutive threadIdx.x) touch neighbouring elements")


# ------------------------------------------------------------------------------------------- vector_add

def _vector_add_args(case: Case) -> dict:
    """a and b with zeros (in both at once), values up to ±1e6 and down to 1e-6; a ends very negative."""
    n = case.params["n"]
    rng = _rng(case, 1)
    a, b = rng.uniform(-1.0, 1.0, size=(2, n))
    kind = rng.choice(4, size=n, p=(0.6, 0.15, 0.15, 0.1))
    a[kind == 1] = b[kind == 1] = 0.0
    big = kind == 2
    a[big] *= 10.0 ** rng.uniform(3, 6, size=big.sum())
    b[big] *= 10.0 ** rng.uniform(3, 6, size=big.sum())
    a[kind == 3] *= 1e-6
    a[-1] = -3.0e5
    return {"a": a.astype(np.float32), "b": b.astype(np.float32), "out": np.empty(n, np.float32)}


def _vector_add_sectors(p: dict) -> int:
    i = np.arange(p["n"])
    cols, rows = i, np.zeros_like(i)
    address = FLOAT_BYTES * i
    return warp_sectors((p["threads"], 1), cols, rows, [address] * 3)


VECTOR_ADD = Task(
    name="vector_add",
    cases=make_cases([{"n": n, "threads": t} for n, t in
                      ((1, 32), (7, 64), (31, 32), (32, 128), (33, 32), (100, 64), (257, 96), (1000, 128))]),
    make_args=_vector_add_args,
    outputs=(Output("out"),),
    reference=lambda case, args: {"out": args["a"].astype(np.float64) + args["b"]},
    configure=lambda case: (_cdiv(case.params["n"], case.params["threads"]), case.params["threads"]),
    rtol=1e-6,
    atol=1e-7,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["n"], "global reads", "2 per element: a[i] and b[i]",
               "Each thread should read a[i] and b[i] once; threads past the end should read nothing."),
        Budget("global_stores", lambda p: p["n"], "global writes", "1 per element", "Write out[i] once."),
        Budget("max_thread_accesses", lambda p: 3, "element accesses in its busiest thread",
               "one element per thread: a[i], b[i] and out[i]",
               "One thread computes one element, out[i] for i = cuda.grid(1); a loop over several elements "
               "in one thread is not what this task asks for."),
        _sector_budget(SECTOR_RULE.format("12 per full warp"),
                       "Thread i must handle element i = blockIdx.x * blockDim.x + threadIdx.x, so that the "
                       "32 threads of a warp read 32 neighbouring floats (4 sectors); an index that jumps "
                       "by gridDim.x (or any stride) between neighbouring threads makes every read move a "
                       "sector of its own.", _vector_add_sectors),
    ),
    summary="one element per thread, 2 global reads and 1 write per element, coalesced",
    hint="Thread i computes out[i] = a[i] + b[i], with i = cuda.grid(1) (block index × block size + thread "
         "index). The inputs include zeros and values up to ±1e6: write every out[i], whatever a[i] is.",
    unwritten_hint="Every element needs a write, zeros included (out starts as NaN, not 0), and the guard "
                   "must let every i < out.size through.",
    error_hints={
        "OutOfBoundsError": "The last block has threads past the end of the arrays: guard with "
                            "`if i < out.size:` (n is not a multiple of the block size).",
        "WriteConflictError": "Two threads computed the same i. Use i = cuda.grid(1), that is "
                              "blockIdx.x * blockDim.x + threadIdx.x: the check launches blocks of several "
                              "sizes, so the block size must come from cuda.blockDim.x, never a number.",
    },
    hidden_sizes=({"n": 1031, "threads": 256}, {"n": 130, "threads": 32}, {"n": 2, "threads": 1024},
                  {"n": 97, "threads": 64}),
)


def check_vector_add(kernel, seeds=None) -> None:
    """Check cell of the vector_add exercise."""
    task = VECTOR_ADD.with_seeds(seeds) if seeds else VECTOR_ADD
    check(task, {"kernel": kernel})


# -------------------------------------------------------------------------------------------- grayscale

def _grayscale_args(case: Case) -> dict:
    """An image with random, gray (r = g = b), black and very bright (HDR, channels up to 8) pixels; the
    last pixel is bright."""
    height, width = case.params["height"], case.params["width"]
    pixels = height * width
    rng = _rng(case, 3)
    rgb = rng.uniform(0.0, 1.0, size=(pixels, 3))
    kind = rng.choice(4, size=pixels, p=(0.6, 0.15, 0.1, 0.15))
    rgb[kind == 1] = rng.uniform(0.0, 1.0, size=((kind == 1).sum(), 1))
    rgb[kind == 2] = 0.0
    rgb[kind == 3] = rng.uniform(1.0, 8.0, size=((kind == 3).sum(), 3))
    rgb[-1] = (6.0, 7.5, 5.0)
    return {"rgb": rgb.reshape(-1).astype(np.float32), "gray": np.empty(pixels, np.float32),
            "height": height, "width": width}


def _grayscale_reference(case: Case, args: dict) -> dict:
    pixels = args["rgb"].astype(np.float64).reshape(-1, 3)
    return {"gray": pixels @ np.array(GRAY_WEIGHTS)}


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


_GRAYSCALE_COMMON = dict(
    make_args=_grayscale_args,
    outputs=(Output("gray"),),
    reference=_grayscale_reference,
    rtol=1e-5,
    atol=1e-6,
    hint="Pixel (row, col) is gray[p] with p = row * width + col; its channels are rgb[3*p], rgb[3*p + 1], "
         "rgb[3*p + 2]. Use x for columns and y for rows. The images include gray pixels (r = g = b), black "
         "ones and very bright ones (channels above 1): apply the same three weights to every pixel, with no "
         "shortcut and no clamping.",
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


def _pixel_budgets(sectors) -> tuple[Budget, ...]:
    return (
        Budget("global_loads", lambda p: 3 * p["height"] * p["width"], "global reads",
               "3 per pixel: its red, green and blue values",
               "Each thread reads the three channels of its own pixel once. Write the weights as numbers in "
               "the kernel: a NumPy array defined outside it lives in global memory, and its reads count."),
        Budget("global_stores", lambda p: p["height"] * p["width"], "global writes", "1 per pixel",
               "Write each gray pixel once."),
        Budget("max_thread_accesses", lambda p: 4, "element accesses in its busiest thread",
               "one pixel per thread: three channel reads and one write",
               "One thread converts one pixel; a thread that loops over a row (or the image) does the work "
               "of many."),
        _sector_budget(SECTOR_RULE.format("about 1.5 per pixel"),
                       "Consecutive threads (threadIdx.x) must take consecutive pixels of a row: col from "
                       "the x indices, row from the y indices. With rows from x, the 32 threads of a warp "
                       "read 32 different rows, and every read moves a sector of its own.", sectors),
    )


GRAYSCALE_KERNEL = Task(
    name="grayscale",
    cases=make_cases([{"height": h, "width": w, "block_x": bx, "block_y": by} for h, w, bx, by in
                      ((40, 40, 32, 4), (7, 70, 32, 8), (33, 33, 8, 32), (3, 5, 8, 8))]),
    configure=lambda case: ((_cdiv(case.params["width"], case.params["block_x"]),
                             _cdiv(case.params["height"], case.params["block_y"])),
                            (case.params["block_x"], case.params["block_y"])),
    budgets=_pixel_budgets(lambda p: _grayscale_sectors(p, (p["block_x"], p["block_y"]))),
    hidden_sizes=({"height": 65, "width": 9, "block_x": 16, "block_y": 8},),
    **_GRAYSCALE_COMMON,
)

GRAYSCALE = Task(
    name="grayscale",
    cases=make_cases([{"height": h, "width": w} for h, w in
                      ((1, 1), (3, 7), (16, 16), (5, 37), (19, 4), (17, 33), (40, 50), (1, 70), (70, 1))]),
    launcher="launch_grayscale",
    launch_rule=_grayscale_launch_rule,
    budgets=_pixel_budgets(lambda p: _grayscale_sectors(p, (TILE, TILE))),
    summary="one pixel per thread, 3 global reads and 1 write per pixel, coalesced; the kernel also ran "
            "with blocks of 32×8, 8×32, 32×4 and 8×8 threads",
    hidden_sizes=({"height": 33, "width": 65}, {"height": 64, "width": 31}, {"height": 2, "width": 129}),
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

def _matmul_args(case: Case) -> dict:
    """a and b uniform in [-1, 1], with a zero row in a and a zero column in b (zeros in c)."""
    m, k, n = case.params["m"], case.params["k"], case.params["n"]
    rng = _rng(case, 4)
    a, b = rng.uniform(-1.0, 1.0, size=(m, k)), rng.uniform(-1.0, 1.0, size=(k, n))
    if m > 1:
        a[m // 2] = 0.0
    if n > 1:
        b[:, n // 2] = 0.0
    return {"a": a.astype(np.float32), "b": b.astype(np.float32), "c": np.empty((m, n), np.float32)}


def _matmul_sectors(p: dict) -> int:
    m, k, n = p["m"], p["k"], p["n"]
    rows, cols = np.divmod(np.arange(m * n), n)
    reads = []
    for j in range(k):
        reads += [FLOAT_BYTES * (rows * k + j), FLOAT_BYTES * (j * n + cols)]
    return warp_sectors((p["block_x"], p["block_y"]), cols, rows, reads + [FLOAT_BYTES * (rows * n + cols)])


MATMUL = Task(
    name="matmul",
    cases=make_cases([{"m": m, "k": k, "n": n, "block_x": bx, "block_y": by} for m, k, n, bx, by in
                      ((1, 1, 1, 16, 16), (3, 5, 7, 16, 16), (17, 4, 9, 32, 8), (5, 2, 40, 8, 32),
                       (24, 6, 24, 16, 16), (40, 3, 5, 16, 16), (4, 67, 6, 16, 16), (6, 3, 67, 32, 4),
                       (20, 33, 18, 8, 8))]),
    make_args=_matmul_args,
    outputs=(Output("c"),),
    reference=lambda case, args: {"c": args["a"].astype(np.float64) @ args["b"].astype(np.float64)},
    configure=lambda case: ((_cdiv(case.params["n"], case.params["block_x"]),
                             _cdiv(case.params["m"], case.params["block_y"])),
                            (case.params["block_x"], case.params["block_y"])),
    rtol=1e-4,
    atol=1e-5,
    budgets=(
        Budget("global_loads", lambda p: 2 * p["m"] * p["n"] * p["k"], "global reads",
               "2·k per output element: a row of a and a column of b",
               "Accumulate in a local variable and read each a[row, j] and b[j, col] once per output."),
        Budget("global_stores", lambda p: p["m"] * p["n"], "global writes", "1 per output element",
               "Write c[row, col] once, after the loop."),
        Budget("max_thread_accesses", lambda p: 2 * p["k"] + 1, "element accesses in its busiest thread",
               "one output element per thread: a row of a, a column of b and one write, 2·k + 1",
               "One thread computes one element c[row, col]; a thread that loops over rows or columns of c "
               "does the work of many."),
        _sector_budget(SECTOR_RULE.format("a few per warp and step j"),
                       "col comes from the x indices and row from the y indices, so that the threads of a "
                       "warp read neighbouring elements of a row of b; with rows from x they read a column "
                       "of a, one sector per thread.", _matmul_sectors),
    ),
    summary="one output per thread, 2·k global reads and 1 write per output element, coalesced",
    hint="c[row, col] = sum over j of a[row, j] * b[j, col], for j from 0 to a.shape[1] - 1 (k, the shared "
         "dimension: not c.shape[0]); row comes from the y indices, col from the x indices.",
    unwritten_hint="Every element of c needs a write, zeros included (c starts as NaN, not 0). The check "
                   "launches blocks of several shapes (16×16, 32×8, 8×32, ...): compute row and col from "
                   "cuda.blockDim, and guard with the shape of c.",
    error_hints={
        "OutOfBoundsError": "Edge blocks have threads outside c: guard with "
                            "`if row < c.shape[0] and col < c.shape[1]:`, and loop j over a.shape[1] (k); "
                            "k may be larger than anything you would hard-code.",
        "WriteConflictError": "Two threads computed the same (row, col). Use row = blockIdx.y * blockDim.y "
                              "+ threadIdx.y and col = blockIdx.x * blockDim.x + threadIdx.x: the check "
                              "launches blocks of several shapes, so the block size must come from "
                              "cuda.blockDim.",
    },
    hidden_sizes=({"m": 33, "k": 70, "n": 2, "block_x": 16, "block_y": 16},
                  {"m": 2, "k": 9, "n": 97, "block_x": 64, "block_y": 2},
                  {"m": 31, "k": 1, "n": 31, "block_x": 8, "block_y": 8}),
)


def check_matmul(kernel, seeds=None) -> None:
    """Check cell of the naive matmul exercise."""
    task = MATMUL.with_seeds(seeds) if seeds else MATMUL
    check(task, {"kernel": kernel})


TASKS = (VECTOR_ADD, GRAYSCALE_KERNEL, GRAYSCALE, MATMUL)
