"""The first code cell of every lesson and exercise: load the course's helpers, or say how to get them.

Inside the course it is `from utils import *`, as always. A notebook opened alone (downloaded from the
site, or in a hosted Jupyter) has no `utils`: then the cell installs the course's wheels from the path in
COURSE, or, with COURSE empty, stops with the one command to run. It installs nothing the learner did
not name.

    python tools/first_cell.py           # put the cell into notebooks/ and solutions/ (then: make exercises)
    python tools/first_cell.py --check   # fail, naming the notebooks, where the first code cell differs
"""

import argparse
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("notebooks/*.ipynb", "solutions/*.ipynb")
PLAIN = "from utils import *"
TAG = "hide-input"  # the site shows the cell's output (the mode line) and folds its code away
LOADER = '''\
# Opened alone, outside the course? Set COURSE to the course's wheel, or to a folder of its wheels
# (`make wheels` in a clone writes them to dist/), and run this cell again: it pip-installs them here.
COURSE = ""
try:
    from utils import *
except ModuleNotFoundError as missing:
    if missing.name != "utils":
        raise
    import importlib, os, subprocess, sys
    if not COURSE:
        raise ModuleNotFoundError("This notebook needs the course's package (utils, gpusim): set COURSE in "
                                  "this cell and run it again, or run: " f"{sys.executable} -m pip install "
                                  "--find-links <folder of the course's wheels> gpu-course") from None
    wheels = COURSE if os.path.isdir(COURSE) else os.path.dirname(os.path.abspath(COURSE))
    command = [sys.executable, "-m", "pip", "install", "--find-links", wheels,
               COURSE if os.path.isfile(COURSE) else "gpu-course"]
    print("Installing the course:", " ".join(command))
    subprocess.run(command, check=True)
    importlib.invalidate_caches()
    from utils import *'''


def first_code_cell(notebook):
    return next(cell for cell in notebook.cells if cell.cell_type == "code")


def with_loader(source: str) -> str:
    """The cell's source with its line `from utils import *` (and a comment on it) replaced by the loader."""
    if LOADER in source:
        return source
    lines = source.split("\n")
    at = next((i for i, line in enumerate(lines) if line.split("#")[0].strip() == PLAIN), None)
    if at is None:
        raise ValueError(f"the first code cell has no line `{PLAIN}`")
    return "\n".join(lines[:at] + [LOADER] + lines[at + 1:])


def stale(path: Path) -> bool:
    cell = first_code_cell(nbformat.read(path, as_version=4))
    return LOADER not in cell.source or TAG not in cell.metadata.get("tags", [])


def write(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    cell = first_code_cell(notebook)
    cell.source = with_loader(cell.source)
    cell.metadata["tags"] = sorted({*cell.metadata.get("tags", []), TAG})
    nbformat.write(notebook, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report notebooks without the cell")
    paths = [path for pattern in NOTEBOOKS for path in sorted(ROOT.glob(pattern))]
    if parser.parse_args().check:
        missing = [str(path.relative_to(ROOT)) for path in paths if stale(path)]
        print("\n".join(f"{name}: the first code cell is not tools/first_cell.py's" for name in missing))
        return 1 if missing else 0
    for path in paths:
        if stale(path):
            write(path)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
