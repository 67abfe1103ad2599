"""The GPU timing protocol of course.grade.gputiming, on the CPU: a recording device keeps a timeline of the
grader's stream, of work left on another stream and of the host's clock, so that the order of the steps and
the refusal of the timing tricks are tested without a GPU (bench/gpu_leaderboard.py runs the same protocol
on one)."""

import numpy as np
import pytest

from course.grade.gputiming import Device, time_kernel

KERNEL_MS = 5.0
SHAPE = (24, 24)


class RecordingDevice(Device):
    def __init__(self):
        self.log: list[str] = []
        self.uploads: list[np.ndarray] = []
        self.stream_ms = self.other_ms = self.host_ms = 0.0

    @property
    def stream(self):
        return "grader's stream"

    def upload(self, array):
        self.log.append("upload")
        self.uploads.append(array.copy())
        return array.copy()

    def poison(self, array):
        self.log.append("poison")
        array[...] = np.nan

    def flush_l2(self):
        self.log.append("flush")

    def cover(self, ms):
        self.log.append("cover")

    def synchronize(self):
        self.log.append("sync")
        self.host_ms = max(self.host_ms, self.stream_ms, self.other_ms)

    def record(self):
        self.log.append("record")
        return self.stream_ms

    def wait(self, event):
        self.log.append("wait")
        self.host_ms = max(self.host_ms, event)

    def elapsed_ms(self, start, stop):
        return stop - start

    def download(self, array):
        self.log.append("download")
        return array.copy()

    def clock(self) -> float:
        return self.host_ms / 1e3


def draw(run):
    rng = np.random.default_rng(run)
    return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2)] + [np.zeros(SHAPE, np.float32)]


def reference(run, arguments):
    return [arguments[0].astype(np.float64) @ arguments[1].astype(np.float64)]


def _time(device, launch):
    return time_kernel("k", device, launch, draw, reference, (2,), 1e-5, repetitions=5, warmup=1,
                       clock=device.clock)


def honest(device):
    def launch(stream, a, b, out):
        assert stream == device.stream
        device.log.append("launch")
        out[...] = a @ b
        device.stream_ms += KERNEL_MS
    return launch


def test_an_honest_kernel_is_timed_by_the_protocols_steps_in_order_on_new_inputs_every_run():
    device = RecordingDevice()
    timing = _time(device, honest(device))
    assert timing.refused == "" and timing.times_ms == [KERNEL_MS] * 5 and timing.median_ms == KERNEL_MS
    run = ["upload", "upload", "upload", "poison", "sync", "flush", "cover", "record", "launch", "record",
           "wait", "sync", "download"]
    assert device.log == run * 6
    firsts = [array.tobytes() for array in device.uploads[::3]]
    assert len(set(firsts)) == 6  # every run's inputs are new


def test_a_result_kept_from_an_earlier_run_earns_no_speed_credit():
    device = RecordingDevice()
    kept = {}

    def launch(stream, a, b, out):
        if "c" not in kept:
            kept["c"] = a @ b
        out[...] = kept["c"]
        device.stream_ms += 0.01
    assert _time(device, launch).refused.startswith("run 1: largest error")


def test_work_left_on_another_stream_is_seen_by_the_host_clock_and_refused():
    device = RecordingDevice()

    def launch(stream, a, b, out):
        out[...] = a @ b  # the right values, but the clock of the grader's stream never sees the work
        device.other_ms = device.stream_ms + KERNEL_MS
    refused = _time(device, launch).refused
    assert "work ran outside the timed stream" in refused and refused.startswith("run 0")


@pytest.mark.parametrize("rows_written", [0, 1, SHAPE[0] - 1])
def test_a_kernel_that_skips_work_on_the_benchmarks_shapes_leaves_poison_and_is_refused(rows_written):
    device = RecordingDevice()

    def launch(stream, a, b, out):
        result = a @ b
        if a.shape != SHAPE:  # the "fast path" for the benchmark's shape: skip (part of) the work
            out[...] = result
        else:
            out[:rows_written] = result[:rows_written]
        device.stream_ms += 0.01
    assert "left unwritten (still the poison, NaN)" in _time(device, launch).refused
