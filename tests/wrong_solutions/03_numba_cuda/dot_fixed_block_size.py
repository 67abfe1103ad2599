"""Ignores `threads` and always launches blocks of 64."""

REPLACES = 'launch_dot_solution'
FAILS = {'check_dot': 'asks for blocks of'}
FAMILY = 'shapes'
SOURCE = '''
def launch_dot(kernel, a, b, out, threads):
    kernel[cdiv(a.size, 64), 64, 0, 64 * 4](a, b, out)
'''
