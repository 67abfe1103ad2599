"""GPU measurements committed to bench/results/, as the lessons read them.

`recorded(name)` returns one Record per device from the files `bench/results/<name>_<device>.json`, each
with its provenance (device, date, command); `recorded(name, key)` returns that section of each file.
When no file (or no section) is there, it prints which file it wanted and returns an empty list, so a
lesson cell says what is missing instead of passing silently. `measured_now(fn)` wraps a live
measurement in the same Record, so one display function shows both.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
RERUN = "bash bench/gpu_all.sh bench/results"


@dataclass
class Record:
    """One device's measurement: `data` and where it came from."""

    data: object
    device: str
    date: str
    command: str
    path: Path | None = None  # None: measured just now, in this process

    @property
    def live(self):
        return self.path is None

    @property
    def tag(self):
        from bench.common import tag_of

        return tag_of(self.device)

    def header(self):
        if self.live:
            return f"{self.device}: measured just now, in this notebook"
        where = self.path.relative_to(RESULTS.parent.parent)
        return f"{self.device}: recorded {self.date} by `{self.command}` ({where})"


def result_files(name):
    """The committed files bench/results/<name>_<device tag>.json, one per device, sorted by tag."""
    pattern = re.compile(rf"{re.escape(name)}_([A-Za-z0-9]+)\.json")
    return sorted(path for path in RESULTS.glob(f"{name}_*.json") if pattern.fullmatch(path.name))


def wanted(name, key=None):
    section = f", section '{key}'" if key else ""
    return f"bench/results/{name}_<device>.json{section}"


def recorded(name, key=None):
    """One Record per device for bench/results/<name>_<device>.json (its `key` section if given)."""
    records = []
    for path in result_files(name):
        content = json.loads(path.read_text())
        origin = content.get("provenance")
        if origin is None:
            raise ValueError(f"{path} has no 'provenance' (device, date, command): add it before committing.")
        if key is not None and key not in content:
            continue
        records.append(Record(content if key is None else content[key], origin["device"], origin["date"],
                              origin["command"], path))
    if not records:
        print(f"No recorded GPU results: this cell reads {wanted(name, key)}, and bench/results/ has none. "
              f"Run `{RERUN}` on a machine with an NVIDIA GPU and commit the files it writes.")
    return records


def measured_now(measure, *args, device=None, **kwargs):
    """Run a measurement here and now and wrap its result as a Record (device: this machine's GPU unless
    named)."""
    if device is None:
        from bench.common import device_name

        device = device_name()
    data = measure(*args, **kwargs)
    return Record(data, device, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "this notebook")
