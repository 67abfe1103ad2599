"""Hard-codes 16 for the block size in the index: right only for 16 x 16 blocks."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'WriteConflictError'}
FAMILY = 'shapes'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * 16 + cuda.threadIdx.x
    row = cuda.blockIdx.y * 16 + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])
'''
