"""gpusim is a library of its own: it imports nothing of the course, and `import gpusim` needs only NumPy and
greenlet (matplotlib and ipywidgets only for the pictures, gpusim.viz)."""

import ast
import json
import re
import subprocess
import sys

from notebook_runs import ROOT

import gpusim

GPUSIM = ROOT / "gpusim"
NEVER = ("course", "utils", "bench", "tests")  # the course around gpusim, at any level of any module
NOT_AT_MODULE_LEVEL = ("torch", "matplotlib", "ipywidgets")  # optional: imported where they are used
PICTURES = GPUSIM / "viz"  # the "pictures" extra: matplotlib at module level is allowed there


def imports(tree: ast.Module) -> list[tuple[str, int, bool]]:
    """(top-level package, line, at module level) of every absolute import in ``tree``."""
    found = []

    def visit(node: ast.AST, module_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name.split(".")[0], child.lineno, module_level) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.module.split(".")[0], child.lineno, module_level))
            inside = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, module_level and not inside)

    visit(tree, True)
    return found


def violations(path) -> list[str]:
    found = []
    for package, line, module_level in imports(ast.parse(path.read_text(), str(path))):
        where = f"{path.relative_to(ROOT)}:{line} imports {package}"
        if package in NEVER:
            found.append(where)
        elif package in NOT_AT_MODULE_LEVEL and module_level:
            if not (package == "matplotlib" and PICTURES in path.parents):
                found.append(where + " at module level")
    return found


def test_the_import_walk_finds_what_it_must_refuse():
    tree = ast.parse("import utils\nfrom course.tasks import part01\nimport matplotlib.pyplot\n"
                     "def f():\n    import torch\nclass C:\n    import bench.common\n")
    assert imports(tree) == [("utils", 1, True), ("course", 2, True), ("matplotlib", 3, True),
                             ("torch", 5, False), ("bench", 7, True)]


def test_gpusim_imports_nothing_of_the_course_and_no_optional_package_at_module_level():
    modules = sorted(GPUSIM.rglob("*.py"))
    assert GPUSIM / "launch.py" in modules and PICTURES / "drawing.py" in modules
    assert [v for path in modules for v in violations(path)] == []


def test_import_gpusim_loads_neither_the_course_nor_the_pictures():
    probe = ("import json, sys\nimport gpusim\n"
             "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    loaded = set(json.loads(run.stdout))
    assert {"gpusim", "numpy", "greenlet"} <= loaded
    assert loaded.isdisjoint({*NEVER, *NOT_AT_MODULE_LEVEL, "ipywidgets", "IPython"})


def test_the_version_is_the_changelog_s_newest_entry_and_the_readme_s():
    assert re.fullmatch(r"\d+\.\d+\.\d+", gpusim.__version__)
    entries = re.findall(r"^## (\S+)", (GPUSIM / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert entries and entries[0] == gpusim.__version__
    assert f"Version {gpusim.__version__} " in (GPUSIM / "README.md").read_text()
