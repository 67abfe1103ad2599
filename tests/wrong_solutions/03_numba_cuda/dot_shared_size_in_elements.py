"""The 4th launch argument is given in elements, not bytes: the shared array is four times too small."""

REPLACES = 'launch_dot_solution'
FAILS = {'check_dot': 'dynamic shared memory'}
FAMILY = 'index'
SOURCE = '''
def launch_dot(kernel, a, b, out, threads):
    kernel[cdiv(a.size, threads), threads, 0, threads](a, b, out)
'''
