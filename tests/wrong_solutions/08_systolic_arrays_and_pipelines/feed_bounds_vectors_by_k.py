"""Bounds the vector index by K instead of M: right only when X is square, as in the lesson's 4 x 4
example."""

REPLACES = 'systolic_solution'
FAMILY = 'shapes'
FAILS = {'check_systolic': 'skewed_feed'}
SOURCE = '''
def systolic_step(weights, a, s, x_left):
    # One clock of the array: the new activation and partial-sum registers, (rows, cols) arrays each.
    a_new = np.empty_like(a)
    a_new[:, 0] = x_left
    a_new[:, 1:] = a[:, :-1]
    s_new = weights * a_new
    s_new[1:, :] += s[:-1, :]
    return a_new, s_new


def skewed_feed(X, cycle, rows):
    # The values entering the left edge of the array's rows in `cycle` (0 where nothing enters).
    m, k = X.shape
    x_left = np.zeros(rows)
    for i in range(min(rows, k)):
        if 0 <= cycle - i < k:
            x_left[i] = X[cycle - i, i]
    return x_left
'''
