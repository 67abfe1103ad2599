"""Grid dimensions swapped: x counts row blocks, y column blocks."""

REPLACES = 'launch_grayscale_solution'
FAILS = {'check_grayscale': 'x and y are swapped'}
FAMILY = 'index'
SOURCE = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    kernel[(cdiv(height, 16), cdiv(width, 16)), (16, 16)](rgb, gray, height, width)
'''
