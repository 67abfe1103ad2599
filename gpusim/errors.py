"""Exceptions raised by gpusim. Every one is a KernelError and its message ends with a one-line hint."""


class KernelError(Exception):
    """Base class of every error that gpusim reports about a kernel or its launch."""

    hint = "Read the message above: it names the block, thread, array, index and kernel line."

    def __init__(self, message, hint=None):
        self.detail = message
        self.advice = hint or self.hint
        super().__init__(f"{message}\nHint: {self.advice}")

    def under(self, schedule):
        """The same error, its message opening with the schedule (gpusim.schedule.Schedule) that showed it."""
        error = type(self)(f"Under the schedule {schedule.name!r} ({schedule.meaning}):\n{self.detail}",
                           self.advice)
        error.__cause__ = self.__cause__
        return error


class RaceError(KernelError):
    """Two threads access one element, at least one writes, and nothing orders them."""

    hint = (
        "put cuda.syncthreads() between the phase that writes the memory and the phase that reads it, "
        "or use cuda.atomic.* when many threads update one element."
    )


class WriteConflictError(RaceError):
    """Two threads use one element on the same line, at least one writing it: an index bug, or an update that
    needs an atomic."""

    hint = (
        "check how each thread computes its index, so that every thread writes its own element; if several "
        "threads are meant to add into one element, use cuda.atomic.add(array, index, value)."
    )


class FlagRaceError(RaceError):
    """A race inside a block whose threads hand data over through flags: a fence, or the order of the data
    access and the flag update, is wrong (gpusim.fences). The message's hint says which."""

    hint = (
        "hand data over as write the data -> cuda.threadfence_block() -> set the flag with cuda.atomic.*, "
        "and read it as poll the flag with cuda.atomic.* -> cuda.threadfence_block() -> read the data."
    )


class ScheduleError(KernelError):
    """A launch leaves different results under two schedules (gpusim.schedules), and no check found a race."""

    hint = ("a result that depends on the order threads run comes from a handover that lets one thread "
            "overwrite or skip data another has not used yet (a flag that waits for too little), or from "
            "atomics whose order decides the value (cuda.atomic.exch, the last one wins).")


class BarrierError(KernelError):
    """Threads of a block (or warp) do not all reach the same barrier or warp collective.

    On a GPU this is undefined behaviour, not always a hang: threads that have exited release a barrier, so
    such a kernel often finishes with wrong data and no error. gpusim is stricter than the hardware and
    refuses it every time."""

    hint = (
        "every thread of the block must reach the same cuda.syncthreads(): keep barriers out of "
        "branches and loops that some threads skip, and do not return early before one. (On a GPU this is "
        "undefined behaviour: it may hang, or finish silently with wrong data; gpusim always stops it.)"
    )


class DeadlockError(BarrierError):
    """Every thread of a block that can still run waits in a loop for a flag that no thread can change."""

    hint = (
        "a thread that waits for a flag needs another thread that will still set it: check that each flag "
        "is set on the element and to the value its waiters poll for, that producer and consumers wait for "
        "each other in the same order, and that no thread waits at cuda.syncthreads() while others poll."
    )


class OutOfBoundsError(KernelError):
    """An index outside the array, negative included."""

    hint = "guard the access with a bounds check such as `if i < a.shape[0]:` and check the index arithmetic."


class ResourceError(KernelError):
    """A launch configuration, argument or resource use that a GPU would reject."""

    hint = "stay within the GPU limits: at most 1024 threads and 48 KiB of static shared memory per block."


class ArgumentTypeError(ResourceError, TypeError):
    """An argument that numba-cuda's dispatcher cannot convert to the type the kernel's signature declares (a
    TypeError, as Numba raises)."""

    hint = "pass a value of the declared type (numba-cuda converts integers, not floats or complex numbers)."


class UninitializedReadError(KernelError):
    """A read of shared memory that no thread of the block has written."""

    hint = "write every shared element before any thread reads it (and put cuda.syncthreads() in between)."


class KernelTimeoutError(KernelError):
    """The launch ran longer than the `timeout` given to gpusim.jit."""

    hint = "look for a loop whose condition never changes, or raise the timeout for a big launch."


class KernelException(KernelError):
    """A Python exception raised by kernel code; the original is the __cause__."""

    hint = "fix the kernel line the message names (a GPU kernel has no Python exceptions to rely on)."


class UnsupportedError(KernelError):
    """The kernel uses a feature of Numba CUDA that gpusim does not simulate; `feature` names it."""

    hint = ("gpusim's README lists what it simulates (Limits); run this kernel on a GPU, or leave the "
            "feature out of the part you test with gpusim.")

    def __init__(self, feature, message=None, hint=None):
        self.feature = feature
        super().__init__(message or f"the kernel uses {feature}, which gpusim does not simulate.", hint)


class CompileError(KernelError):
    """Numba's CUDA compiler rejects the kernel: it would not run on a GPU (course.compilegate)."""

    hint = ("a GPU kernel can use numbers, tuples, arrays, cuda.*, math.* and @cuda.jit(device=True) "
            "functions; no lists, dicts, strings, imports, return values or other Python objects.")
