"""Clamps the gray value to 1.0, assuming channels never exceed 1: bright (HDR) pixels come out wrong."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'wrong'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        value = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                 + float32(0.1140) * rgb[3 * p + 2])
        gray[p] = min(value, float32(1.0))
'''
