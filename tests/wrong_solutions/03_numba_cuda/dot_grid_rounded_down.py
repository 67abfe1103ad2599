"""Grid rounded down (a.size // threads): the last partial block is missing."""

REPLACES = 'launch_dot_solution'
FAILS = {'check_dot': 'at least 1'}
FAMILY = 'index'
SOURCE = '''
def launch_dot(kernel, a, b, out, threads):
    kernel[a.size // threads, threads, 0, threads * 4](a, b, out)
'''
