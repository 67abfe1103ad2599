"""The first thread of each row converts the whole row in a loop; the other threads idle."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'element accesses in its busiest thread'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col == 0:
        for c in range(width):
            p = row * width + c
            gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                       + float32(0.1140) * rgb[3 * p + 2])
'''
