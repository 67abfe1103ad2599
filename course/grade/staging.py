"""The learner worker's copy of the course, without what only the grader may run.

Functions marked :func:`course.tasks.common.grader_only` (the references and the inputs of the plain-Python
tasks) keep their names in the learner worker's staged copy, so that every module imports as in a notebook,
but lose their bodies: calling one raises. Learner code there cannot call the course's reference as its
answer, from any thread, nor rebuild an input that the grader hands out a chunk at a time. The kernel
runner, where no learner code runs, gets the whole course.
"""

from __future__ import annotations

import ast
from pathlib import Path

MARK = "grader_only"


def _marked(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any((isinstance(d, ast.Name) and d.id == MARK) or (isinstance(d, ast.Attribute) and d.attr == MARK)
               for d in function.decorator_list)


def _refusal(name: str) -> ast.stmt:
    message = (f"{name} belongs to the grader: in classroom grading it is not in the process that runs your "
               f"code. Write your own.")
    return ast.Raise(exc=ast.Call(func=ast.Name("RuntimeError", ast.Load()), args=[ast.Constant(message)],
                                  keywords=[]), cause=None)


def strip_source(source: str) -> tuple[str, list[str]]:
    """``source`` with the body of every function marked grader_only replaced by a ``raise``, and the names
    of those functions."""
    tree = ast.parse(source)
    stripped = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _marked(node):
            docstring = node.body[:1] if ast.get_docstring(node, clean=False) is not None else []
            node.body = [*docstring, _refusal(node.name)]
            stripped.append(node.name)
    return (ast.unparse(ast.fix_missing_locations(tree)) + "\n" if stripped else source), stripped


def strip_grader_only(folder: Path) -> list[str]:
    """Strip every Python file under ``folder`` in place (see :func:`strip_source`); the functions stripped,
    as ``path:name``."""
    stripped = []
    for path in sorted(folder.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if MARK not in source:
            continue
        new, names = strip_source(source)
        if names:
            path.write_text(new, encoding="utf-8")
            stripped += [f"{path.relative_to(folder)}:{name}" for name in names]
    return stripped
