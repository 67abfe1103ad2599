"""Counts in whole warps: element (block·warps + warp)·32 + lane, with warps = blockDim.x // 32. Right
whenever the block is a whole number of warps (32, 64, 96, 128, 256, 1024: every block size the check used to
launch), wrong for 48 or 100 threads, which the task allows."""

FAMILY = "shapes"
REPLACES = 'vector_add_solution'
FAILS = {'check_vector_add': 'the check launches blocks of any size, warps whole or not'}
SOURCE = '''
@cuda.jit
def vector_add(a, b, out):
    warp, lane = cuda.threadIdx.x // 32, cuda.threadIdx.x % 32
    i = (cuda.blockIdx.x * (cuda.blockDim.x // 32) + warp) * 32 + lane
    if i < out.size:
        out[i] = a[i] + b[i]
'''
