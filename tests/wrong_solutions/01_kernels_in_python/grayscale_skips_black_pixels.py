"""Skips black pixels, assuming the output starts at 0: they are never written."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'never written'}
FAMILY = 'inputs'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        r, g, b = rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]
        if r + g + b > 0.0:
            gray[p] = float32(0.2989) * r + float32(0.5870) * g + float32(0.1140) * b
'''
