"""Run a command as a child subreaper and report what it leaves behind, and its peak memory.

    python -m grading.reaper REPORT.json -- COMMAND...

Every process the command starts that outlives it (a worker's escaped child, a sandbox not torn down) is
re-parented to this process instead of init, so none can hide. They are listed in REPORT.json, then killed.
The report also holds the command's exit status and its own peak resident memory (VmHWM, polled while it
runs, so its workers' memory does not count).
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
POLL_S = 0.2
SETTLE_S = 2.0  # time for sandboxes to finish tearing down after the command exits


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children() -> list[tuple[int, bool]]:
    """This process's children, each with whether it is still alive (not a zombie waiting to be reaped)."""
    mine, found = os.getpid(), []
    for name in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{name}/stat").read_text() if name.isdigit() else ""
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split() if stat else []
        if fields and int(fields[1]) == mine:
            found.append((int(name), fields[0] != "Z"))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
    except OSError:
        return "?"


def main() -> int:
    report, command = Path(sys.argv[1]), sys.argv[sys.argv.index("--") + 1:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    process = subprocess.Popen(command)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _peak_kib(process.pid))
        time.sleep(POLL_S)
    time.sleep(SETTLE_S)
    survivors = []
    for pid, alive in _children():
        if alive:
            survivors.append(_cmdline(pid))
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    report.write_text(json.dumps({"returncode": process.returncode, "survivors": survivors,
                                  "peak_kib": peak}))
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
