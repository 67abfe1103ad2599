"""Launches one thread per block (blocks of 1), ignoring threads."""

REPLACES = 'launch_dot_solution'
FAILS = {'check_dot': 'asks for blocks of `threads`'}
FAMILY = 'method'
SOURCE = '''
def launch_dot(kernel, a, b, out, threads):
    kernel[a.size, 1, 0, 4](a, b, out)
'''
