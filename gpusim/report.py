"""`Report`: what one launch did, as integer counters that print nicely in a notebook."""

import html

from .context import WARP_SIZE
from .counters import COUNTER_NAMES, SECTOR_BYTES

_DESCRIPTIONS = {
    "blocks": "blocks run",
    "threads": "threads run",
    "barriers": "block-wide barriers completed (summed over blocks)",
    "global_loads": "element reads of global arrays",
    "global_stores": "element writes of global arrays",
    "global_atomics": "atomic updates of global elements",
    "global_bytes": "bytes read or written in global arrays",
    "global_requests": "warp-level global accesses",
    "global_sectors": "32-byte sectors touched by warp-level global accesses",
    "shared_loads": "element reads of shared arrays",
    "shared_stores": "element writes of shared arrays",
    "shared_atomics": "atomic updates of shared elements",
    "shared_requests": "warp-level shared accesses",
    "bank_conflicts": "extra shared-memory wavefronts caused by bank conflicts",
    "max_thread_accesses": "element accesses (global and shared) of the busiest thread",
    "active_threads": "threads that read or wrote global or shared memory at least once",
    "max_block_barriers": "block-wide barriers completed by the busiest block (barrier steps)",
    "max_thread_collectives": "warp collectives (shuffles, votes, syncwarp) of the busiest thread",
    "static_shared_bytes": "bytes of static shared arrays per block (the largest block)",
    "dynamic_shared_bytes": "bytes of dynamic shared memory per block, as launched",
}
LAUNCH_FIELDS = ("blocks", "threads", "barriers", "max_block_barriers", "max_thread_collectives",
                 "static_shared_bytes", "dynamic_shared_bytes")
MAX_FIELDS = frozenset({"max_block_barriers", "max_thread_collectives", "static_shared_bytes",
                        "dynamic_shared_bytes", "max_thread_accesses"})


def combine(totals, values):
    """Add one launch's counters (a dict from `Report.as_dict`) into `totals` for a run of several launches:
    busiest-thread, busiest-block and per-block sizes take the maximum, everything else the sum; ratios and
    counters that were not counted are skipped."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if name in MAX_FIELDS:
            totals[name] = max(totals.get(name, 0), value)
        else:
            totals[name] = totals.get(name, 0) + value
    return totals


class Report:
    """Counters of the last launch. Memory and work counters are None for check=False launches."""

    FIELDS = LAUNCH_FIELDS + COUNTER_NAMES

    def __init__(self, kernel_name, grid, block, checked, launch, counters=None):
        """`launch`: the LAUNCH_FIELDS, counted in every mode; `counters`: the memory and work counters of a
        checked launch (None for check=False)."""
        self.kernel_name = kernel_name
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.checked = checked
        for name in LAUNCH_FIELDS:
            setattr(self, name, launch[name])
        for name in COUNTER_NAMES:
            setattr(self, name, None if counters is None else counters[name])

    @property
    def coalescing_efficiency(self):
        """Bytes the threads asked for / bytes of the sectors moved (1.0 is perfect)."""
        if not self.global_sectors:
            return None
        return self.global_bytes / (self.global_sectors * SECTOR_BYTES)

    @property
    def sectors_per_request(self):
        if not self.global_requests:
            return None
        return self.global_sectors / self.global_requests

    @property
    def lane_utilization(self):
        """Average fraction of a warp's 32 lanes that take part in a warp-level memory access."""
        requests = (self.global_requests or 0) + (self.shared_requests or 0)
        if not requests:
            return None
        accesses = sum(
            getattr(self, name) or 0
            for name in COUNTER_NAMES
            if name.endswith(("_loads", "_stores", "_atomics"))
        )
        return accesses / (requests * WARP_SIZE)

    def as_dict(self):
        """Every counter and derived ratio, for graders."""
        values = {name: getattr(self, name) for name in self.FIELDS}
        values.update(
            coalescing_efficiency=self.coalescing_efficiency,
            sectors_per_request=self.sectors_per_request,
            lane_utilization=self.lane_utilization,
        )
        return values

    def _rows(self):
        for name, value in self.as_dict().items():
            if value is None:
                text = "not counted (check=False)" if not self.checked else "-"
            elif isinstance(value, float):
                text = f"{value:.3f}"
            else:
                text = f"{value:,}"
            yield name, text, _DESCRIPTIONS.get(name, "")

    def _title(self):
        return f"gpusim report: {self.kernel_name}[grid={self.grid}, block={self.block}]"

    def __repr__(self):
        rows = list(self._rows())
        width = max(len(name) for name, _, _ in rows)
        value_width = max(len(text) for _, text, _ in rows)
        lines = [self._title()]
        lines += [f"  {name:<{width}}  {text:>{value_width}}  {about}" for name, text, about in rows]
        return "\n".join(lines)

    def _repr_html_(self):
        cells = "".join(
            f"<tr><td><code>{name}</code></td><td style='text-align:right'>{html.escape(text)}</td>"
            f"<td>{html.escape(about)}</td></tr>"
            for name, text, about in self._rows()
        )
        return f"<table><caption>{html.escape(self._title())}</caption>{cells}</table>"
