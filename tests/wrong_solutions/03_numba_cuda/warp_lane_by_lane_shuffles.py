"""Lane 0 fetches the other 31 lanes' values one by one with cuda.shfl_sync: right sums, a serial reduction
(31 shuffle steps instead of 5)."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'warp collectives (shuffles, votes) in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    value = a[i] if i < a.size else np.float32(0.0)
    total = value
    for lane in range(1, 32):
        total += cuda.shfl_sync(0xFFFFFFFF, value, lane)
    if cuda.laneid == 0 and i // 32 < sums.size:
        sums[i // 32] = total
'''
