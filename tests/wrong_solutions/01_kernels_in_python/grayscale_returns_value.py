"""Returns the gray value instead of storing it only: a kernel returns nothing."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'A kernel cannot return a value'}
FAMILY = 'compiler'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])
        return gray[p]
'''
