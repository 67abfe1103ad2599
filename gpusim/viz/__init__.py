"""gpusim.viz: pictures of what a kernel does, drawn with matplotlib, explorable with ipywidgets.

Every view returns a static figure (a `View`, shown as a PNG in any notebook, even without widgets);
each `*_widget` adds sliders when ipywidgets is available and falls back to the static figure.

    viz.thread_map(kernel, grid, block, args, block_id=0, thread=3)   # who touched which element
    viz.thread_map_widget(kernel, grid, block, args)                  # ... with block/thread sliders
    viz.phase_stepper(kernel, grid, block, args)                      # barrier by barrier, races in red
    viz.memory_access(kernel, grid, block, args, warp=0, request=0)   # sectors and banks of one access
    viz.warp_pattern(lambda lane: 2 * lane)                           # the same, for an index pattern
    viz.wave_view(1794, 1794, tile=(256, 128), sms=108)               # tiles coloured by wave
    viz.roofline([("matmul", flops, nbytes, seconds)])                # achieved points under the roof
    viz.output_diff(out, expected, rec.written("out"))                # wrong and never-written elements

Kernels are run once under gpusim with record=True on copies of `args`; `record(...)` does that
explicitly and its Recording can be passed to every view instead of (kernel, grid, block, args).
"""

from .compare import output_diff
from .drawing import View
from .memory_access import access_counts, memory_access, memory_access_widget, requests, warp_pattern
from .phases import phase_accesses, phase_stepper, phase_stepper_widget
from .recording import Recording, record
from .roofline import roofline
from .thread_map import thread_map, thread_map_widget, touched
from .waves import wave_plan, wave_view, wave_view_widget

__all__ = [
    "Recording",
    "View",
    "access_counts",
    "memory_access",
    "memory_access_widget",
    "output_diff",
    "phase_accesses",
    "phase_stepper",
    "phase_stepper_widget",
    "record",
    "requests",
    "roofline",
    "thread_map",
    "thread_map_widget",
    "touched",
    "warp_pattern",
    "wave_plan",
    "wave_view",
    "wave_view_widget",
]
