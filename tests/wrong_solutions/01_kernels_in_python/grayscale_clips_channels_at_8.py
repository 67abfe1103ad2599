"""Clips every channel at 8, the brightest value the check's HDR pixels used to reach: right on those images,
wrong on the brighter channels the task allows (up to 10⁴)."""

FAMILY = "inputs"
REPLACES = 'grayscale_solution'
FAILS = {'check_grayscale': 'grayscale gives wrong results'}
SOURCE = '''
@cuda.jit
def grayscale(rgb, gray, height, width):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < height and col < width:
        p = row * width + col
        top = float32(8.0)
        r, g, b = min(rgb[3 * p], top), min(rgb[3 * p + 1], top), min(rgb[3 * p + 2], top)
        gray[p] = float32(0.2989) * r + float32(0.5870) * g + float32(0.1140) * b
'''
