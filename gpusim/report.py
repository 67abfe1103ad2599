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
}


class Report:
    """Counters of the last launch. Memory counters are None for check=False launches."""

    FIELDS = ("blocks", "threads", "barriers") + COUNTER_NAMES

    def __init__(self, kernel_name, grid, block, checked, blocks=0, threads=0, barriers=0, counters=None):
        self.kernel_name = kernel_name
        self.grid = tuple(grid)
        self.block = tuple(block)
        self.checked = checked
        self.blocks = blocks
        self.threads = threads
        self.barriers = barriers
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
