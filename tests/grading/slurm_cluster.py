"""A real single-node Slurm cluster in a temporary folder, for the test of grading on Slurm.

munged, slurmctld and slurmd (Debian's munge and slurm-wlm) run in the foreground as this (root) user, with a
generated munge key and slurm.conf, free ports and every file in the folder; the cluster is stopped by the
pids of the daemons it started, and nothing of the machine's own Slurm or munge (if any) is touched.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo")
START_S = 60


def missing() -> str:
    """Why no cluster can be started here ("" when it can)."""
    absent = [name for name in DAEMONS if shutil.which(name) is None
              and not Path("/usr/sbin", name).exists()]
    if absent:
        return f"not installed: {', '.join(absent)} (Debian: slurmctld slurmd slurm-client munge)"
    if os.geteuid() != 0:
        return "slurmd runs jobs as their users only when started as root"
    return ""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _binary(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class SlurmCluster:
    """``with SlurmCluster(folder) as cluster:`` sbatch and friends work with ``cluster.env``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
        self.env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}

    def _config(self) -> None:
        node = socket.gethostname().split(".")[0]
        for name in ("state", "spool", "log", "munge-socket"):
            (self.folder / name).mkdir(parents=True, exist_ok=True)
        (self.folder / "munge-socket").chmod(0o755)
        key_folder = self.folder / "munge-key"
        key_folder.mkdir(mode=0o700)
        (key_folder / "munge.key").write_bytes(os.urandom(1024))
        (key_folder / "munge.key").chmod(0o400)
        self.socket = self.folder / "munge-socket" / "munge.socket"
        settings = {
            "ClusterName": "course", "SlurmctldHost": f"{node}(127.0.0.1)",
            "SlurmctldPort": _free_port(), "SlurmdPort": _free_port(), "SlurmUser": "root",
            "SlurmdUser": "root", "AuthType": "auth/munge", "CredType": "cred/munge",
            "AuthInfo": f"socket={self.socket}", "StateSaveLocation": self.folder / "state",
            "SlurmdSpoolDir": self.folder / "spool", "SlurmctldPidFile": self.folder / "slurmctld.pid",
            "SlurmdPidFile": self.folder / "slurmd.pid", "SlurmctldLogFile": self.folder / "log" / "ctld.log",
            "SlurmdLogFile": self.folder / "log" / "slurmd.log", "ProctrackType": "proctrack/linuxproc",
            "TaskPlugin": "task/none", "SchedulerType": "sched/builtin", "SelectType": "select/cons_tres",
            "SelectTypeParameters": "CR_Core", "ReturnToService": 2, "MpiDefault": "none",
            "JobCompType": "jobcomp/none", "AccountingStorageType": "accounting_storage/none",
            "SwitchType": "switch/none",
        }
        lines = [f"{key}={value}" for key, value in settings.items()]
        lines += [f"NodeName={node} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory=1000 State=UNKNOWN",
                  f"PartitionName=grading Nodes={node} Default=YES MaxTime=INFINITE State=UP"]
        (self.folder / "slurm.conf").write_text("\n".join(lines) + "\n")
        self.key = key_folder / "munge.key"

    def _start(self, *command: str) -> None:
        log = (self.folder / "log" / f"{Path(command[0]).name}.out").open("w")
        self.processes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                               start_new_session=True))

    def __enter__(self) -> SlurmCluster:
        self._config()
        try:
            self._start(_binary("munged"), "--foreground", "--force", f"--socket={self.socket}",
                        f"--key-file={self.key}", f"--log-file={self.folder / 'log' / 'munged.log'}",
                        f"--pid-file={self.folder / 'munged.pid'}",
                        f"--seed-file={self.folder / 'munged.seed'}")
            self._wait(lambda: self.socket.exists(), "munged")
            conf = str(self.folder / "slurm.conf")
            self._start(_binary("slurmctld"), "-D", "-f", conf)
            self._start(_binary("slurmd"), "-D", "-f", conf)
            self._wait(self._idle, "slurmd to register with slurmctld")
        except BaseException:
            self.stop()
            raise
        return self

    def _idle(self) -> bool:
        shown = subprocess.run([_binary("sinfo"), "--noheader", "--format=%t"], env=self.env,
                               capture_output=True, text=True)
        return shown.returncode == 0 and shown.stdout.strip() == "idle"

    def _wait(self, ready, what: str) -> None:
        deadline = time.monotonic() + START_S
        while not ready():
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"the test's Slurm cluster did not start ({what}): {self.logs()}")
            time.sleep(0.5)

    def logs(self) -> str:
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-1500:]}"
                         for path in sorted((self.folder / "log").glob("*")))

    def stop(self) -> None:
        """Stop the daemons this cluster started, by their pids, newest first."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    def __exit__(self, *exc) -> None:
        self.stop()
