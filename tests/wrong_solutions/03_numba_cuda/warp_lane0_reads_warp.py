"""Lane 0 reads its warp's 32 values itself and adds them up: no shuffles, one lane does the warp's work."""

REPLACES = 'warp_sum_solution'
FAILS = {'check_warp_sum': 'in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def warp_sum(a, sums):
    i = cuda.grid(1)
    if cuda.laneid == 0 and i < a.size:
        total = np.float32(0.0)
        for j in range(i, min(i + 32, a.size)):
            total += a[j]
        sums[i // 32] = total
'''
