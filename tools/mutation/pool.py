"""Run mutants in parallel worker processes, with a per-mutant timeout, appending results to a state file.

Each slot drives one worker process (:func:`.worker.serve`) from a thread of its own. A slot first asks its
worker to run a notebook's baseline, then sends it that notebook's mutants one by one. A mutant whose run
takes longer than the timeout is killed-by-timeout: its worker's whole process group is killed and a fresh
worker started. Results go to a JSON-lines state file as they come, keyed by mutant id and by a fingerprint
of the notebook and the course's code, so an interrupted run resumes where it stopped and a change to the
checks starts the affected notebooks afresh.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import asdict
from pathlib import Path

from . import worker
from .mutator import Mutant

PREPARE_TIMEOUT_S = 600
RESTART_AFTER = 150  # mutants per worker process, to bound what its caches hold


class WorkerLost(Exception):
    """The worker ran past its deadline or died."""


def fingerprint(notebook: Path, root: Path = worker.ROOT) -> str:
    """A hash of what a mutant's result depends on: the notebook and the course's Python code."""
    digest = hashlib.sha256(Path(notebook).read_bytes())
    for path in sorted((root / "course").rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def load_state(path: Path) -> dict[str, dict]:
    """Results in a state file, by mutant id (the last one wins)."""
    results = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by an interruption
            results[record["id"]] = record
    return results


class _Slot:
    """One worker process, restarted after a timeout, a death or RESTART_AFTER mutants."""

    def __init__(self, settings: dict):
        self.settings = settings
        self.process = None
        self.connection = None
        self.notebook: str | None = None
        self.served = 0

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=worker.serve, args=(child, self.settings), daemon=True)
        self.process.start()
        child.close()
        self.notebook, self.served = None, 0

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # the worker made itself a group leader
        except (ProcessLookupError, PermissionError):
            self.process.kill()
        self.process.join(timeout=10)
        self.connection.close()
        self.process = self.connection = self.notebook = None

    def ask(self, message, timeout: float) -> dict:
        if self.process is None:
            self.start()
        self.connection.send(message)
        return self.wait(timeout)

    def wait(self, timeout: float) -> dict:
        try:
            if self.connection.poll(timeout):
                return self.connection.recv()
        except (EOFError, OSError):
            pass
        died = not self.process.is_alive()
        self.stop()
        raise WorkerLost("died" if died else "timeout")


class Pool:
    """Runs mutants on `jobs` slots; `on_result(mutant, record)` is called for every finished mutant."""

    def __init__(self, jobs: int, timeout: float, settings: dict, state: Path, on_result):
        self.jobs, self.timeout, self.state = jobs, timeout, state
        self.settings = {**settings, "battery_seconds": settings.get("battery_seconds", timeout)}
        self.on_result = on_result
        self.lock = threading.Lock()
        self.queue: list[Mutant] = []
        self.baselines: dict[str, dict] = {}
        self.fingerprints: dict[str, str] = {}
        self.paths: dict[str, Path] = {}
        self.stopping = False  # set on the way out: a worker killed then is not the mutant's doing

    def run(self, mutants: list[Mutant], paths: dict[str, Path]) -> dict[str, dict]:
        """Run every mutant; returns the baseline reply of each notebook that was prepared."""
        self.paths = paths
        self.fingerprints = {stem: fingerprint(path) for stem, path in paths.items()}
        self.queue = list(mutants)
        slots = [_Slot(self.settings) for _ in range(max(1, self.jobs))]
        threads = [threading.Thread(target=self._drive, args=(slot,), daemon=True) for slot in slots]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(timeout=1)
        finally:
            with self.lock:
                self.queue.clear()
                self.stopping = True
            for slot in slots:
                slot.stop()
        return self.baselines

    def _take(self, notebook: str | None) -> Mutant | None:
        with self.lock:
            if not self.queue:
                return None
            position = next((i for i, m in enumerate(self.queue) if m.notebook == notebook), 0)
            return self.queue.pop(position)

    def _drive(self, slot: _Slot) -> None:
        while (mutant := self._take(slot.notebook)) is not None:
            if not self._prepared(slot, mutant.notebook):
                reason = self.baselines[mutant.notebook]["reason"]
                self._record(mutant, {"status": "skipped", "reason": reason}, persist=False)
                continue
            self._record(mutant, self._run_one(slot, mutant))

    def _prepared(self, slot: _Slot, notebook: str) -> bool:
        """Whether the slot's worker holds this notebook's baseline, and that baseline passes every check."""
        with self.lock:
            known = self.baselines.get(notebook)
        if known is not None and not known["ok"]:
            return False
        if slot.notebook == notebook and slot.served < RESTART_AFTER:
            return True
        if slot.served >= RESTART_AFTER:
            slot.stop()
        try:
            reply = slot.ask(("prepare", str(self.paths[notebook])), PREPARE_TIMEOUT_S)
        except WorkerLost as lost:
            reply = {"failed": {"(baseline)": f"the worker {lost} while running the notebook"}, "errors": {},
                     "seconds": PREPARE_TIMEOUT_S}
        ok = not reply["failed"]
        reason = "; ".join(f"{k}: {v}" for k, v in reply["failed"].items())
        with self.lock:
            self.baselines.setdefault(notebook, {**reply, "ok": ok,
                                                 "reason": f"the original solution fails {reason}" if not ok
                                                 else ""})
        if ok:
            slot.notebook = notebook
        return ok

    def _run_one(self, slot: _Slot, mutant: Mutant) -> dict:
        slot.served += 1
        start = time.perf_counter()
        try:
            reply = slot.ask(("mutant", asdict(mutant)), self.timeout)
        except WorkerLost as lost:
            status = "timeout" if str(lost) == "timeout" else "crashed"
            return {"status": status, "seconds": round(time.perf_counter() - start, 2),
                    "reason": f"ran over {self.timeout:g} s" if status == "timeout" else "the worker died"}
        record = {"seconds": round(reply["seconds"], 2)}
        if reply["failed"]:
            return {**record, "status": "killed", "failed": reply["failed"], "hidden_only": reply["hidden"]}
        record.update(status="survived", cell_error=reply.get("cell_error"))
        if not self.settings.get("battery"):
            return {**record, "reason": "no equivalence battery was run"}
        try:
            verdict = slot.wait(self.settings["battery_seconds"] + 60)
        except WorkerLost as lost:
            what = "ran over its time" if str(lost) == "timeout" else "died"
            return {**record, "reason": f"the equivalence battery {what}"}
        status = "equivalent" if verdict["equivalent"] else "survived"
        return {**record, "status": status, "reason": verdict["reason"], "battery_cases": verdict["cases"],
                "battery_seconds": round(verdict["seconds"], 2)}

    def _record(self, mutant: Mutant, record: dict, persist: bool = True) -> None:
        record = {"id": mutant.id, "fingerprint": self.fingerprints[mutant.notebook], **record}
        with self.lock:
            if self.stopping:
                return
            if persist:
                self.state.parent.mkdir(parents=True, exist_ok=True)
                with self.state.open("a") as state:
                    state.write(json.dumps(record) + "\n")
            self.on_result(mutant, record)
