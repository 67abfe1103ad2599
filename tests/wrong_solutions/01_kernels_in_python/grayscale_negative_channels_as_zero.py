"""Takes a negative channel as 0, since light cannot be negative: right on every image the check used to draw
(channels from 0 to 8), wrong on the negative channels the task allows."""

FAMILY = "inputs"
REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'negative channels taken as 0'}
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        zero = float32(0.0)
        r, g, b = max(rgb[3 * p], zero), max(rgb[3 * p + 1], zero), max(rgb[3 * p + 2], zero)
        gray[p] = float32(0.2989) * r + float32(0.5870) * g + float32(0.1140) * b
'''
