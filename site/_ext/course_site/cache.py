"""Where myst-nb caches executed lessons: a folder per digest of the code and data their outputs depend on.

myst-nb's cache recognises a notebook by its code cells alone, so a change to gpusim, the course package,
bench/results or the pins would otherwise leave stale outputs on the site. Keying the folder by those files
re-executes every lesson when any of them changes, and only the changed notebooks otherwise.
"""

import hashlib
import shutil
from pathlib import Path

DEPENDENCIES = ("utils.py", "requirements.txt", "course", "gpusim", "bench")
SKIPPED = ("__pycache__", ".pyc")


def code_digest(root: Path) -> str:
    """sha256 of every file the lessons' outputs depend on (names and contents), in a stable order."""
    digest = hashlib.sha256()
    for name in DEPENDENCIES:
        path = root / name
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for file in files:
            if file.is_file() and not any(part in str(file) for part in SKIPPED):
                digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_path(base: Path, root: Path) -> Path:
    """base/<digest of the course code>; caches made for other code are removed."""
    path = base / code_digest(root)
    if base.is_dir():
        for old in base.iterdir():
            if old != path:
                shutil.rmtree(old, ignore_errors=True)
    return path


def outdated_lessons(app, env, added, changed, removed):
    """Every lesson, when the course code changed since the last build (Sphinx alone would keep them)."""
    digest = Path(app.config.nb_execution_cache_path).name
    if getattr(env, "course_code_digest", None) == digest:
        return []
    env.course_code_digest = digest
    return sorted(name for name in env.found_docs if name.startswith("notebooks/"))


def setup(app):
    app.connect("env-get-outdated", outdated_lessons)
