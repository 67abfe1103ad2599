"""A shortcut for pixels that are already gray (r = g = b): gray = r. The weights sum to 0.9999, not 1."""

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
        r, g, b = rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]
        if r == g and g == b:
            gray[p] = r
        else:
            gray[p] = float32(0.2989) * r + float32(0.5870) * g + float32(0.1140) * b
'''
