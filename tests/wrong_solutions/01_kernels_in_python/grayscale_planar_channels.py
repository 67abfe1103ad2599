"""Reads the channels as three planes (rgb[p], rgb[p + n], ...) instead of interleaved per pixel."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'wrong'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    n = height * width
    if row < height and col < width:
        p = row * width + col
        gray[p] = float32(0.2989) * rgb[p] + float32(0.5870) * rgb[p + n] + float32(0.1140) * rgb[p + 2 * n]
'''
