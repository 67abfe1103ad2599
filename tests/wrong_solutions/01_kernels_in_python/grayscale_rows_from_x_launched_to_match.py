"""Rows from x and columns from y, with the grid transposed to match: right values, but the lanes of a warp
walk down a column (uncoalesced)."""

REPLACES = 'launch_grayscale_solution'
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


def launch_grayscale(kernel, rgb, gray, height, width):
    block = dim3(16, 16)
    grid = dim3(cdiv(height, block.x), cdiv(width, block.y))
    kernel[grid, block](rgb, gray, height, width)
'''
