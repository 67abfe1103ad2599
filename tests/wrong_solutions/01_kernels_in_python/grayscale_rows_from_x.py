"""Rows from the x indices and columns from y: where the grid covers the image the values are right, but a
warp reads 32 rows (uncoalesced)."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'sector transfers of global memory'}
FAMILY = 'method'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])
'''
