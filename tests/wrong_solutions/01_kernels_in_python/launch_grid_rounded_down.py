"""Grid rounded down (width // 16): the edge pixels get no thread."""

REPLACES = 'launch_grayscale_solution'
FAILS = {'check_grayscale': 'at least 1'}
FAMILY = 'index'
SOURCE = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    kernel[(width // 16, height // 16), (16, 16)](rgb, gray, height, width)
'''
