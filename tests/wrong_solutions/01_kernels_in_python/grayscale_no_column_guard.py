"""Guards the row only: columns past the width spill into the next row and past the end of the image."""

REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'A thread with col >= width must not write'}
FAMILY = 'index'
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height:
        p = row * width + col
        gray[p] = (float32(0.2989) * rgb[3 * p] + float32(0.5870) * rgb[3 * p + 1]
                   + float32(0.1140) * rgb[3 * p + 2])
'''
