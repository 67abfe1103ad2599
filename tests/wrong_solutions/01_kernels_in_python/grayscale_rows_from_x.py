"""Rows from the x indices and columns from y: wide images are left unfinished."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'never written'}
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = 0.2989 * rgb[3 * p] + 0.5870 * rgb[3 * p + 1] + 0.1140 * rgb[3 * p + 2]
'''
