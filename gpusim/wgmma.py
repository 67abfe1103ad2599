"""Hopper's warpgroup MMA (``wgmma.mma_async``) reads its shared-memory operands through 64-bit matrix
descriptors. This module is a NumPy model of that read, from the PTX ISA ("Shared Memory Matrix Layout",
the canonical layouts and the descriptor format). It checks on the CPU that a kernel's copies and its
descriptors agree, before the kernel runs on a GPU. gpusim does not run wgmma itself: the instruction is
asynchronous, and its operands come from TMA copies, which gpusim has no model of either.

Layouts modelled: 16-bit elements (bf16, f16), 128-byte swizzle, K-major and MN-major. In units of elements,
with T = 8 elements per 16 bytes, the canonical layouts are

* K-major:  ((8, m), (T, 2k)) : ((8T, SBO), (1, T)). Rows 128 bytes apart within an 8-row atom, atoms
  SBO bytes apart; the 16 k values of a row are contiguous.
* MN-major: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO)). 64 contiguous MN elements per 128-byte row;
  8 k rows 128 bytes apart in an atom, groups of 8 k rows SBO bytes apart, groups of 64 MN elements LBO
  bytes apart.

After that, the 128-byte swizzle XORs address bits 4-6 with bits 7-9 (Swizzle<3, 4, 3>).
"""

from dataclasses import dataclass

import numpy as np

SWIZZLE_MODES = {0: "none", 1: "128-byte", 2: "64-byte", 3: "32-byte"}


@dataclass(frozen=True)
class WgmmaDescriptor:
    """The fields of a wgmma shared-memory matrix descriptor: the start address, the leading and stride
    byte offsets (multiples of 16), and the swizzle mode (1: 128-byte)."""

    start: int
    leading: int
    stride: int
    swizzle: int

    def encode(self) -> int:
        return (((self.start & 0x3FFFF) >> 4) | ((self.leading >> 4) & 0x3FFF) << 16
                | ((self.stride >> 4) & 0x3FFF) << 32 | self.swizzle << 62)

    @classmethod
    def decode(cls, bits: int) -> "WgmmaDescriptor":
        return cls((bits & 0x3FFF) << 4, ((bits >> 16) & 0x3FFF) << 4, ((bits >> 32) & 0x3FFF) << 4,
                   bits >> 62)


def swizzle128(address: int) -> int:
    """The byte a 128-byte-swizzled layout stores the logical byte ``address`` at."""
    return address ^ (((address >> 7) & 7) << 4)


def wgmma_operand(shared: np.ndarray, descriptor: int, extent: int, major: str = "K") -> np.ndarray:
    """The extent x 16 operand (as uint16, indexed [m or n, k]) that one k16 step of wgmma reads through
    ``descriptor`` from ``shared`` (the block's shared memory as bytes, address 0 first)."""
    fields = WgmmaDescriptor.decode(descriptor)
    if fields.swizzle != 1:
        raise NotImplementedError(f"{SWIZZLE_MODES.get(fields.swizzle)} swizzle: only 128-byte is modelled")
    words = np.asarray(shared).view(np.uint16)
    out = np.empty((extent, 16), np.uint16)
    for mn in range(extent):
        for k in range(16):
            if major == "K":
                linear = fields.start + (mn // 8) * fields.stride + (mn % 8) * 128 + 2 * k
            elif major == "MN":
                linear = fields.start + (mn // 64) * fields.leading + 2 * (mn % 64) + (k % 8) * 128 \
                    + (k // 8) * fields.stride
            else:
                raise ValueError(f"major is 'K' or 'MN', not {major!r}")
            out[mn, k] = words[swizzle128(linear) // 2]
    return out
