"""Keeps the three weights in a Python list inside the kernel."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'needs memory that a GPU kernel cannot allocate'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    weights = [0.2989, 0.5870, 0.1140]
    if row < height and col < width:
        p = row * width + col
        total = float32(0.0)
        for c in range(3):
            total += weights[c] * rgb[3 * p + c]
        gray[p] = total
'''
