"""The hostile class: one learner per attack family on the classroom grader, and the grades each must get.

Each learner hands in assignment 01 (some also 02), built like the fixture class (:mod:`.learners`): the
released notebook with the reference solutions typed in, then cells replaced by grade_id, or new cells
inserted after one (``AFTER``). Attack cells start with ``HOSTILE = {...}``: the paths and sockets of this
run (:func:`context`). The others are files that are not plain notebooks (FIFOs, symbolic links, a
dot-named copy, several copies, an oversized one). Every honest part of a hostile notebook must still earn
its points: a submission can cost only itself.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from . import learners
from .fake_class import SOLUTIONS, _learner_notebook, _solved, released_stub
from .learners import A01, A02, UNSOLVED, VECTOR_ADD_PRODUCT

MARKER = "gpusim-hostile"  # in every file an attack plants and every process it leaves behind
MAX_NOTEBOOK_MB = 2  # the run's --max-notebook-mb: "bloated" is over it, honest notebooks far below


def AFTER(grade_id: str) -> tuple[str, str]:  # noqa: N802 (reads as a marker in the tables below)
    """Key of new cells inserted after the cell ``grade_id`` (a list of sources)."""
    return ("after", grade_id)


# ------------------------------------------------------------------------------------ the reply channel

REPLY_PIPES = '''
import os, stat
PIPES = []
for fd in range(3, 256):  # the worker's reply pipe is one of these
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            PIPES.append(fd)
    except OSError:
        pass


def forge(data):
    for fd in PIPES:
        try:
            os.write(fd, data)
        except OSError:
            pass
'''

FORGED_SETUP = REPLY_PIPES + '''
forge(b'{"missing": 5}\\n{"ready": true, "cell_errors": 5}\\n{"type": "ready", "cell_errors": 5}\\n')
'''
DEEP_REPLY = REPLY_PIPES + '''
forge(b'{"type": "ready", "cell_errors": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\\n")
'''
ENDLESS_REPLY = REPLY_PIPES + '''
for _ in range(300):  # 300 MB and never a newline
    forge(b"x" * 2**20)
'''

LAUNCH_GRAYSCALE_FORGING = REPLY_PIPES + '''

def launch_grayscale(kernel, rgb, gray, height, width):
    forge(b'{"type": "answer", "steps": [{"kind": "kernel", "kernel": {"version": 1}, "plans": null, '
          b'"error": null}], "failure": null}\\n')
    block = dim3(16, 16)
    kernel[dim3(cdiv(width, block.x), cdiv(height, block.y)), block](rgb, gray, height, width)
'''

FLOOD_OUTPUT = '''
import os, sys
chunk = "e" * 2**20
for _ in range(50):
    sys.stderr.write(chunk)
    print(chunk)
for _ in range(50):
    os.write(2, chunk.encode())
'''

# ------------------------------------------------------------------------- other learners and the host

SURVIVOR = '''
import os, sys
survivor = """
import os, signal, sys, time
spare = {os.getpid(), 1, WORKER}
end = time.time() + 120
while time.time() < end:
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in spare:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.2)
""".replace("WORKER", str(os.getpid()))
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", survivor, HOSTILE["marker"] + "-survivor"])
    os._exit(0)
'''

PLANTER = '''
import os
planted = []
for root in (HOSTILE["submissions"], HOSTILE["course"], HOSTILE["out"], *HOSTILE["temp"]):
    folders = [root]
    try:
        folders += [os.path.join(root, name) for name in os.listdir(root)]
    except OSError:
        pass
    for folder in folders:
        for name in ("utils.py", "numpy.py", HOSTILE["marker"] + "-planted"):
            try:
                with open(os.path.join(folder, name), "w") as file:
                    file.write("raise SystemExit('planted by another learner')\\n")
                planted.append(folder)
            except OSError:
                pass
        try:
            for name in os.listdir(folder):
                if name.endswith(".ipynb"):
                    open(os.path.join(folder, name), "w").close()
        except OSError:
            pass
ATTACK_WORKED = any(not folder.startswith(tuple(HOSTILE["temp"])) for folder in planted)
'''

FILLER = '''
import os
chunk, written = b"f" * 2**20, {}
for folder in HOSTILE["temp"]:
    written[folder] = 0
    try:
        with open(os.path.join(folder, HOSTILE["marker"] + "-fill"), "wb") as file:
            for _ in range(3 * 2**10):  # 3 GB
                file.write(chunk)
                written[folder] += len(chunk)
    except OSError:
        pass
ATTACK_WORKED = max(written.values()) > 200 * 2**20
'''

CALLER = '''
import socket
ATTACK_WORKED = False
for family, address in ((socket.AF_UNIX, HOSTILE["socket"]), (socket.AF_UNIX, "\\0" + HOSTILE["abstract"]),
                        (socket.AF_INET, ("127.0.0.1", HOSTILE["port"]))):
    try:
        with socket.socket(family, socket.SOCK_STREAM) as client:
            client.settimeout(2)
            client.connect(address)
            client.sendall(b"hostile")
            ATTACK_WORKED = True
    except OSError:
        pass
'''

FORKER = '''
import os, time
forked = 0
try:
    for _ in range(2000):
        if os.fork() == 0:
            time.sleep(120)
            os._exit(0)
        forked += 1
except OSError:
    pass
ATTACK_WORKED = forked >= 1000
'''

HOG = '''
try:
    hog = bytearray(16 * 2**30)
    ATTACK_WORKED = True
except MemoryError:
    pass
'''

# After the learner's last solution cell: an attack that worked costs vector_add (the run expects 5/5 in
# the sandbox, where none works, and 4/5 without it for the attacks only the sandbox stops).
SPOILS_VECTOR_ADD = '''
if globals().get("ATTACK_WORKED"):
    @cuda.jit
    def vector_add(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] * b[i]
'''

# ------------------------------------------------------------------------------------- hidden solutions

SNOOPER = '''
import glob, importlib, json, linecache, os, subprocess, sys
LEAK = {}


def harvest(text):
    """Keep the solution cells of a source notebook found anywhere."""
    try:
        for cell in json.loads(text)["cells"]:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id and "BEGIN SOLUTION" in "".join(cell["source"]):
                LEAK.setdefault(grade_id, "".join(cell["source"]))  # the first found: the course graded
    except Exception:
        pass


roots = {HOSTILE["course"], os.path.dirname(HOSTILE["course"]), "/course", "/work", os.getcwd()}
for finder in list(sys.meta_path):  # the editable install's finder knows where the checkout is
    try:
        mapping = getattr(importlib.import_module(finder.__module__), "MAPPING", {})
    except Exception:
        mapping = {}
    roots.update(os.path.dirname(path) for path in mapping.values())
for root in [HOSTILE["course"], *sorted(roots - {HOSTILE["course"]})]:
    for pattern in ("solutions", "*/solutions", "*/*/solutions"):
        for path in glob.glob(os.path.join(root, pattern, "01_kernels_in_python.ipynb")):
            try:
                harvest(open(path).read())
            except OSError:
                pass
    shown = subprocess.run(["git", "-c", "safe.directory=*", "-C", root, "show",
                            "HEAD:solutions/01_kernels_in_python.ipynb"], capture_output=True, text=True)
    harvest(shown.stdout)


def leaked(grade_id):
    """Define the reference solution of a cell when the notebook found it."""
    source = LEAK.get(grade_id)
    if source:
        filename = f"<leaked {grade_id}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), globals())
'''

# --------------------------------------------------------------------------------- the simulator itself

VECTOR_ADD_OVER_BUDGET = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        x = a[i]
        again = a[i]  # a second read of a[i]: over the budget of 2 reads per element
        out[i] = x + b[i]
'''

PATCH_SIMULATOR = '''
import gpusim, gpusim.checker, gpusim.report
gpusim.Report.as_dict = lambda self: {"global_loads": 0, "global_stores": 0}
gpusim.report.Report.as_dict = gpusim.Report.as_dict
for _name in dir(gpusim.checker.Checker):
    if not _name.startswith("__") and callable(getattr(gpusim.checker.Checker, _name)):
        setattr(gpusim.checker.Checker, _name, lambda *args, **kwargs: None)
gpusim.jit = lambda kernel, **kwargs: gpusim.launch.Kernel(kernel, check=False)
'''

# Under gpusim a kernel is Python: were it not compiled first, this one would patch the runner's gpusim (its
# Report) from inside, and its extra reads would pass the budget. Numba's compiler refuses it.
VECTOR_ADD_TROJAN = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i == 0:
        load = cuda.__class__.__init__.__globals__["__builtins__"]["__import__"]
        load("gpusim.report", fromlist=["Report"]).Report.as_dict = lambda self: {"global_loads": 0}
    if i < out.size:
        x = a[i]
        again = a[i]
        out[i] = x + b[i]
'''

BLOCK_SUM_RACY = '''
@cuda.jit
def block_sum(a, partial):
    tile = cuda.shared.array(THREADS, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        tile[t] = a[i]
    else:
        tile[t] = 0.0
    cuda.syncthreads()
    stride = THREADS // 2
    while stride > 0:
        if t < stride:
            tile[t] += tile[t + stride]  # no barrier between the steps: a race on a GPU
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = tile[0]
'''

SWAP_JIT_FOR_NUMPY = '''
import gpusim
import course.tasks.common


class NumpyInstead:
    def __init__(self, kernel, **kwargs):
        self.name = getattr(kernel, "__name__", "")
        self.report = type("Report", (), {"as_dict": lambda self: {"global_loads": 0, "global_stores": 0}})()

    def __getitem__(self, config):
        def launch(*args):
            if len(args) == 3 and args[2].ndim == 1:
                args[2][:] = args[0] + args[1]
            elif len(args) == 3:
                args[2][:] = args[0] @ args[1]
            else:
                args[1][:] = args[0].reshape(-1, 3) @ np.array([0.2989, 0.5870, 0.1140], np.float32)
        return launch


gpusim.jit = NumpyInstead
course.tasks.common.gpusim.jit = NumpyInstead
'''

# --------------------------------------------------------------------------------------- hidden inputs

HIDER = '''
import os, sys


def seeds_in_sight():
    """The seeds of the cases the check is running, found on the call stack."""
    found, frame = set(), sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            for case in getattr(value, "cases", None) or ():
                found.add(getattr(case, "seed", None))
        frame = frame.f_back
    return found - {None}


class Sneaky:
    """Stands for the kernel: on a hidden test it shouts the seeds and ends the process with one."""

    def __init__(self, kernel):
        self.kernel = kernel

    @property
    def py_func(self):
        seeds = seeds_in_sight()
        if seeds - {0, 1, 2}:
            sys.stderr.write(f"LEAKED_SEED seed={min(seeds)} {sorted(seeds)}\\n")
            sys.stderr.flush()
            os._exit(min(seeds) % 256)
        return self.kernel.py_func
'''

LAUNCH_GRAYSCALE_HIDER = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    seeds = seeds_in_sight()
    if seeds - {0, 1, 2}:
        raise type(f"LEAKED_SEED_{min(seeds)}", (Exception,), {})(f"LEAKED_SEED seed={min(seeds)}")
    block = dim3(16, 16)
    kernel[dim3(cdiv(width, block.x), cdiv(height, block.y)), block](rgb, gray, height, width)
'''

# ------------------------------------------------------------------------------------- ending the worker

EXIT_AFTER_DEFINING = "\nimport os\nos._exit(3)\n"
SEGFAULT = "import ctypes\nctypes.string_at(0)\n"
KILL_SELF = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"


def _vector_add_solution() -> str:
    notebook = json.loads((SOLUTIONS / f"{A01}.ipynb").read_text())
    cell = next(c for c in notebook["cells"]
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "vector_add_solution")
    return "".join(cell["source"])


def cells(context: dict) -> dict[str, dict[str, dict]]:
    """learner -> assignment -> {grade_id or AFTER(grade_id): new source(s)}; attack cells get ``context``."""
    prefix = f"HOSTILE = {context!r}\n"

    def attack(*sources: str) -> list[str]:
        return [prefix + source for source in sources]

    spoils = {AFTER("matmul_solution"): [SPOILS_VECTOR_ADD]}
    released_stubs = dict.fromkeys(("vector_add_solution", "grayscale_solution", "launch_grayscale_solution",
                                    "matmul_solution"), UNSOLVED)
    return {
        "forger": {A01: {AFTER("vector_add_solution"): attack(FORGED_SETUP, DEEP_REPLY, ENDLESS_REPLY)}},
        "forger_call": {A01: {"launch_grayscale_solution": LAUNCH_GRAYSCALE_FORGING}},
        "flooder": {A01: {AFTER("setup"): attack(FLOOD_OUTPUT)}},
        "survivor": {A01: {AFTER("setup"): attack(SURVIVOR)}},
        "planter": {A01: {AFTER("setup"): attack(PLANTER), **spoils}},
        "filler": {A01: {AFTER("setup"): attack(FILLER), **spoils}},
        "caller": {A01: {AFTER("setup"): attack(CALLER), **spoils}},
        "forker": {A01: {AFTER("setup"): attack(FORKER), **spoils}},
        "hog": {A01: {AFTER("setup"): attack(HOG), **spoils}},
        "snooper": {A01: {AFTER("setup"): attack(SNOOPER),
                          **{grade_id: released_stub(A01, grade_id) + f"\nleaked({grade_id!r})\n"
                             for grade_id in released_stubs}}},
        "patcher": {A01: {"vector_add_solution": VECTOR_ADD_OVER_BUDGET + PATCH_SIMULATOR},
                    A02: {"block_sum_solution": BLOCK_SUM_RACY + PATCH_SIMULATOR}},
        "swapper": {A01: {**released_stubs, AFTER("setup"): [SWAP_JIT_FOR_NUMPY]}},
        "trojan": {A01: {"vector_add_solution": VECTOR_ADD_TROJAN}},
        "exiter": {A01: {"vector_add_solution": _vector_add_solution() + EXIT_AFTER_DEFINING,
                         AFTER("grayscale_solution"): [SEGFAULT], AFTER("matmul_solution"): [KILL_SELF]}},
        "hider": {A01: {AFTER("setup"): [HIDER],
                        AFTER("vector_add_solution"): ["vector_add = Sneaky(vector_add)\n"],
                        "launch_grayscale_solution": LAUNCH_GRAYSCALE_HIDER}},
    }


P, F, E, M = "passed", "failed", "error", "missing"
NOTHING = (0, (M, M, M))
REFUSED = (0, (E, E, E))
EXPECTED = {  # learner -> assignment (or a refused file's stem) -> (points, statuses of its rows)
    "forger": {A01: (5, (P, P, P)), A02: NOTHING},
    "forger_call": {A01: (3, (P, E, P)), A02: NOTHING},
    "flooder": {A01: (5, (P, P, P)), A02: NOTHING},
    "survivor": {A01: (5, (P, P, P)), A02: NOTHING},
    "planter": {A01: (5, (P, P, P)), A02: NOTHING},
    "filler": {A01: (5, (P, P, P)), A02: NOTHING},
    "caller": {A01: (5, (P, P, P)), A02: NOTHING},
    "forker": {A01: (5, (P, P, P)), A02: NOTHING},
    "hog": {A01: (5, (P, P, P)), A02: NOTHING},
    "snooper": {A01: (0, (F, F, F)), A02: NOTHING},
    "patcher": {A01: (4, (F, P, P)), A02: (4, (F, P, P))},
    "swapper": {A01: (0, (F, F, F)), A02: NOTHING},
    "trojan": {A01: (4, (F, P, P)), A02: NOTHING},
    "exiter": {A01: (4, (E, P, P)), A02: NOTHING},
    "hider": {A01: (2, (F, F, P)), A02: NOTHING},  # a hidden test only ever fails
    "twins": {A01: (4, (F, P, P)), A02: NOTHING},
    "dotted": {A01: NOTHING, A02: NOTHING},
    "fifo": {A01: REFUSED, A02: NOTHING},
    "linker": {A01: REFUSED, A02: REFUSED, "other": (0, (E,))},
    "copycat": {A01: REFUSED, A02: REFUSED},
    "ghost": {A01: REFUSED, A02: REFUSED},
    "bloated": {A01: REFUSED, A02: NOTHING},
    "nested_json": {A01: REFUSED, A02: NOTHING},
    "empty": {A01: NOTHING, A02: NOTHING},
}
# Attacks on the machine, other learners' processes and files: only the sandbox stops them. Without it
# (--sandbox off), the first four are run against decoy folders to show that they do work there, and get
# these grades instead; the last two are left out (they would fill the machine's /dev/shm, or leave
# hundreds of processes behind).
UNCONFINED = {"planter": {A01: (4, (F, P, P))}, "caller": {A01: (4, (F, P, P))},
              "snooper": {A01: (5, (P, P, P))}, "survivor": {A01: (5, (P, P, P))}}
NEEDS_SANDBOX = (*UNCONFINED, "filler", "forker")


def _write(path: Path, notebook: dict, mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1))
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def _files(folder: Path, names: set[str]) -> None:
    """The learners whose submission is not one plain notebook per assignment."""
    solved = _solved(A01)
    if "twins" in names:  # three copies of 01: the newest, matched by its cells, has a wrong vector_add
        wrong = _learner_notebook(A01, {"vector_add_solution": VECTOR_ADD_PRODUCT})
        _write(folder / "twins" / f"{A01}.ipynb", solved, 1_700_000_000)
        _write(folder / "twins" / f"{A01} (1).ipynb", solved, 1_700_000_100)
        _write(folder / "twins" / "final version.ipynb", wrong, 1_700_000_200)
    if "dotted" in names:
        _write(folder / "dotted" / f".{A01}.ipynb", solved)
    if "fifo" in names:
        (folder / "fifo").mkdir(parents=True)
        os.mkfifo(folder / "fifo" / f"{A01}.ipynb")
    if "linker" in names:
        (folder / "linker").mkdir(parents=True)
        (folder / "linker" / f"{A01}.ipynb").symlink_to("/dev/zero")
        (folder / "linker" / f"{A02}.ipynb").symlink_to(SOLUTIONS / f"{A02}.ipynb")
        (folder / "linker" / "other.ipynb").symlink_to(Path("..") / "correct" / f"{A01}.ipynb")
    if "copycat" in names:
        (folder / "copycat").symlink_to("correct")
    if "ghost" in names:
        os.mkfifo(folder / "ghost")
    if "bloated" in names:
        bloated = copy.deepcopy(solved)
        bloated["cells"].append({"cell_type": "markdown", "metadata": {},
                                 "source": "x" * (MAX_NOTEBOOK_MB + 1) * 2**20})
        _write(folder / "bloated" / f"{A01}.ipynb", bloated)
    if "nested_json" in names:
        (folder / "nested_json").mkdir(parents=True)
        (folder / "nested_json" / f"{A01}.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    if "empty" in names:
        (folder / "empty").mkdir(parents=True)
        (folder / "empty" / "notes.txt").write_text("nothing to hand in yet\n")


def write_hostile_class(folder: Path, context: dict, names: set[str] | None = None) -> None:
    """The hostile learners ``names`` (default: all) under ``folder``; ``context`` names this run's paths."""
    names = set(EXPECTED) if names is None else names
    for learner, notebooks in cells(context).items():
        for assignment, replacements in notebooks.items():
            if learner in names:
                _write(folder / learner / f"{assignment}.ipynb", _learner_notebook(assignment, replacements))
    _files(folder, names)


HOST_TEMP = ("/tmp", "/var/tmp", "/dev/shm")


def context(submissions: Path, out: Path, sockets: Path, port: int, course: Path,
            temp: tuple[str, ...] = HOST_TEMP) -> dict:
    """What the attack cells aim at in one run: the class's folders, the course, the host's sockets and
    temporary folders (decoys, in a run without the sandbox)."""
    return {"submissions": str(submissions), "out": str(out), "course": str(course), "marker": MARKER,
            "socket": str(sockets / "grader.sock"), "abstract": f"{MARKER}-{os.getpid()}", "port": port,
            "temp": list(temp)}


assert set(learners.EXPECTED).isdisjoint(EXPECTED), "hostile learners need names of their own"
