"""Row i gets its element one cycle late: the skew is off by one."""

REPLACES = 'systolic_solution'
FAMILY = 'index'
FAILS = {'check_systolic': 'skewed_feed(X, cycle='}
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
        if 0 <= cycle - i - 1 < m:
            x_left[i] = X[cycle - i - 1, i]
    return x_left
'''
