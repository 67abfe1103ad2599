"""The resource class: attacks on what submissions graded at the same time share (the CPUs, the memory, the
process count of a user id), each beside an honest neighbour who must lose nothing by it.

* ``burner`` starts 24 busy processes, each in a session of its own (setsid), before its setup cell, and is
  graded at ``--jobs`` equal to the cores beside ``burner_neighbour``, whose deadlines were measured on an
  idle machine (the reference solution's times).
* ``holders`` starts three processes that try to hold 1 GiB each at once, over the memory that a submission
  may hold in all; should they all manage it, its vector_add is spoiled (as in :mod:`.hostile`).
* ``bomb`` starts as many processes as it may, up to 255, which sleep until its worker ends, while a second
  grader run at the same time on the same machine grades ``bomb_neighbour``, whose cell starts a few
  processes: should one fork fail, its vector_add is spoiled.

Learners are named so that the grader, which takes them in order, grades each attacker beside its neighbour.
"""

from __future__ import annotations

import json
from pathlib import Path

from .fake_class import _learner_notebook
from .hostile import AFTER, MARKER, SPOILS_VECTOR_ADD
from .learners import A01

BURNERS = 24
BOMB_PROCESSES = 255
BOMB_HOLD_S = 10  # how long the bomb's cell waits, with its processes in place, before its notebook goes on
HELD_BYTES = 2**30

BURNER = f'''
import os, time
for _ in range({BURNERS}):
    if os.fork() == 0:
        os.setsid()
        end = time.time() + 120
        while time.time() < end:
            pass
        os._exit(0)
'''

ENDLESS_VECTOR_ADD = '''
@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    while i < out.size:  # i never grows
        out[i] = a[i] + b[i]
'''

HOLD = f"""
import os, sys, time
block = bytearray({HELD_BYTES})
block[::4096] = b"\\1" * len(range(0, len(block), 4096))  # every page written: resident
os.write(int(sys.argv[1]), b"x")
time.sleep(120)
"""

# Each child is a fresh Python (exec), far under the limit of 2 GiB that RLIMIT_AS sets per process.
HOLDERS = f'''
import os, select, subprocess, sys, time
reports, report = os.pipe()
children = [subprocess.Popen([sys.executable, "-c", {HOLD!r}, str(report)], pass_fds=(report,))
            for _ in range(3)]
os.close(report)
held, end = 0, time.time() + 60
while held < 3 and time.time() < end and all(child.poll() is None for child in children):
    if select.select([reports], [], [], 0.2)[0]:
        held += len(os.read(reports, 3))
ATTACK_WORKED = held == 3 and all(child.poll() is None for child in children)  # 3 GiB held at once
for child in children:
    child.kill()
    child.wait()
'''

BOMB_FORKS = f'''
import os
for _ in range({BOMB_PROCESSES}):
    try:
        pid = os.fork()
    except OSError:
        break  # as many as its limit allows
    if pid == 0:
        try:
            os.execv("/bin/sleep", ["{MARKER}-bomb", "600"])  # until the worker's sandbox ends
        finally:
            os._exit(0)
'''

BOMB = f'''
import subprocess, sys, time
subprocess.run([sys.executable, "-c", {BOMB_FORKS!r}])  # a small process forks fast
time.sleep({BOMB_HOLD_S})
'''

FORKS = '''
import os
children = []
try:
    for _ in range(16):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        children.append(pid)
except OSError:
    ATTACK_WORKED = True  # another learner's processes cost this one its fork
for pid in children:
    os.waitpid(pid, 0)
'''

# Attackers other than the burner keep only vector_add (the other tasks are missing: fewer checks to run), and
# pay for an attack that worked with it.
ONLY_VECTOR_ADD = {"grayscale_solution": None, "launch_grayscale_solution": None, "matmul_solution": None}
SPOILS = {AFTER("vector_add_solution"): [SPOILS_VECTOR_ADD]}
CELLS = {  # learner -> (the class it is in, {grade_id or AFTER(grade_id): new source(s)})
    "burner": ("neighbours", {**ONLY_VECTOR_ADD, "vector_add_solution": ENDLESS_VECTOR_ADD}),
    "burner_neighbour": ("neighbours", {}),
    "holders": ("neighbours", {**ONLY_VECTOR_ADD, AFTER("setup"): [HOLDERS], **SPOILS}),
    "bomb": ("first grader", {**ONLY_VECTOR_ADD, AFTER("setup"): [BOMB]}),
    "bomb_neighbour": ("second grader", {**ONLY_VECTOR_ADD, AFTER("setup"): [FORKS], **SPOILS}),
}
BEFORE_SETUP = {"burner": BURNER}  # a code cell put in front of the setup cell: it runs first

P, E, T, M = "passed", "error", "timeout", "missing"
EXPECTED = {  # learner -> the grades it may get for assignment 01: (points, statuses of its tasks)
    # Its own CPU time runs out in its setup cell (left out: vector_add is then undefined) or, should the
    # setup finish first, in its endless kernel: which one depends on the share its burners leave it.
    "burner": ((0, (E, M, M)), (0, (T, M, M))),
    "burner_neighbour": ((5, (P, P, P)),),
    "holders": ((1, (P, M, M)),),
    "bomb": ((1, (P, M, M)),),
    "bomb_neighbour": ((1, (P, M, M)),),
}


def write(folder: Path, group: str) -> list[str]:
    """The learners of one class ("neighbours", "first grader" or "second grader") under ``folder``; their
    names."""
    names = []
    for learner, (which, replacements) in CELLS.items():
        if which != group:
            continue
        notebook = _learner_notebook(A01, replacements)
        if learner in BEFORE_SETUP:
            setup = next(index for index, cell in enumerate(notebook["cells"])
                         if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
            notebook["cells"].insert(setup, {"cell_type": "code", "execution_count": None, "metadata": {},
                                             "outputs": [], "source": BEFORE_SETUP[learner].lstrip("\n")})
        path = folder / learner / f"{A01}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(notebook, indent=1))
        names.append(learner)
    return names
