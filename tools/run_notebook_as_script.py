"""Run notebooks' code cells top to bottom with plain python3, where there is no Jupyter (a GPU machine).

    python3 tools/run_notebook_as_script.py notebooks/*.ipynb [--figures DIR] [--jobs N]

Each notebook runs in its own python3 process, from its own folder, with matplotlib's Agg backend. Magic and
shell lines (`%...`, `!...`) are skipped. A cell's last expression is shown as a notebook would: a figure
(or anything with a PNG picture) is saved to DIR, anything else printed. A cell that raises is reported with
its number and traceback, and the run goes on with the next cell. Figures shown with plt.show() are saved
too, as DIR/<notebook>/cell<NN>_<k>.png. The exit status is 1 if any cell of any notebook failed.
"""

import argparse
import ast
import json
import linecache
import os
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def code_cells(path):
    cells = json.loads(Path(path).read_text())["cells"]
    return [(number, "".join(cell["source"])) for number, cell in enumerate(cells, start=1)
            if cell["cell_type"] == "code"]


def without_magics(source):
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


class FigureSaver:
    """Saves every figure a cell shows (or leaves open) as a PNG, numbered by cell."""

    def __init__(self, folder):
        self.folder, self.cell, self.count = folder, 0, 0

    def next_path(self):
        self.count += 1
        if self.folder is None:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / f"cell{self.cell:02d}_{self.count}.png"

    def save(self, figure):
        path = self.next_path()
        if path is not None:
            figure.savefig(path, dpi=100, bbox_inches="tight")

    def save_png(self, data):
        path = self.next_path()
        if path is not None:
            path.write_bytes(data)

    def show_all(self):
        import matplotlib.pyplot as plt

        for number in plt.get_fignums():
            self.save(plt.figure(number))
        plt.close("all")


def show_value(value, saver):
    """What a notebook shows for a cell's last expression."""
    if value is None:
        return
    from matplotlib.figure import Figure

    if isinstance(value, Figure):
        saver.save(value)
    elif hasattr(value, "_repr_png_"):
        saver.save_png(value._repr_png_())
    else:
        print(repr(value))


def run_cell(source, namespace, filename, saver):
    source = without_magics(source)
    # As Jupyter does: tools that read a kernel's source lines (tracebacks, gpusim's array names) find them.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = ast.parse(source, filename)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        show_value(eval(compile(ast.Expression(last.value), filename, "eval"), namespace), saver)
    saver.show_all()


def run_one(path, figures):
    """Run one notebook in this process; print a line per cell and return the numbers of failed cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path).resolve()
    os.chdir(path.parent)
    sys.path.insert(0, str(ROOT))
    saver = FigureSaver(None if figures is None else Path(figures).resolve() / path.stem)

    def show(*args, **kwargs):  # a plain function: pyplot sets attributes on its show
        saver.show_all()

    plt.show = show
    namespace = {"__name__": "__main__", "display": lambda *values: [show_value(v, saver) for v in values]}
    failed = []
    for number, source in code_cells(path):
        saver.cell, saver.count = number, 0
        print(f"--- {path.name} cell {number} ---", flush=True)
        start = time.perf_counter()
        try:
            run_cell(source, namespace, f"<{path.name} cell {number}>", saver)
            status = "ok"
        except BaseException as error:  # noqa: BLE001 -- report every cell's failure, then go on
            if isinstance(error, KeyboardInterrupt):
                raise
            traceback.print_exc()
            failed.append(number)
            status = f"FAILED: {type(error).__name__}"
        print(f"--- {path.name} cell {number}: {status} ({time.perf_counter() - start:.1f} s)", flush=True)
    print(f"=== {path.name}: {len(failed)} failed cell(s) {failed}", flush=True)
    return failed


def run_in_subprocess(path, figures, logs):
    """Run one notebook in a fresh python3; its output goes to logs/<name>.log, or is returned."""
    command = [sys.executable, __file__, "--one", str(path)]
    command += ["--figures", str(figures)] if figures else []
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{Path(path).stem}.log").write_text(output)
    summary = next((line for line in reversed(output.splitlines()) if line.startswith("===")),
                   f"=== {Path(path).name}: did not finish (exit status {done.returncode})")
    return path, seconds, done.returncode, summary, output


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+")
    ap.add_argument("--figures", help="folder for the figures and, with several notebooks, one log each")
    ap.add_argument("--jobs", type=int, default=1, help="notebooks run at once")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        sys.exit(1 if run_one(args.notebooks[0], args.figures) else 0)
    logs = Path(args.figures) if args.figures else None
    failures = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for _, seconds, status, summary, output in pool.map(
                lambda p: run_in_subprocess(p, args.figures, logs), args.notebooks):
            if logs is None:
                print(output, flush=True)
            print(f"{seconds:7.1f} s  {summary}", flush=True)
            failures += status != 0
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
