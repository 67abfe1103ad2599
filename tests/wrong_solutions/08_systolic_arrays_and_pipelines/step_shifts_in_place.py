"""Shifts the activations left to right in place: a value crosses the whole row in one clock, which is a
broadcast, not a systolic array."""

REPLACES = 'systolic_solution'
FAMILY = 'method'
FAILS = {'check_systolic': 'systolic_step is wrong in cycle'}
SOURCE = '''
def systolic_step(weights, a, s, x_left):
    # One clock of the array: the new activation and partial-sum registers, (rows, cols) arrays each.
    a_new = a
    for j in range(a.shape[1]):
        a_new[:, j] = x_left if j == 0 else a_new[:, j - 1]
    s_new = weights * a_new
    s_new[1:, :] += s[:-1, :]
    return a_new, s_new


def skewed_feed(X, cycle, rows):
    # The values entering the left edge of the array's rows in `cycle` (0 where nothing enters).
    m, k = X.shape
    x_left = np.zeros(rows)
    for i in range(min(rows, k)):
        if 0 <= cycle - i < m:
            x_left[i] = X[cycle - i, i]
    return x_left
'''
