"""Grid hard-coded for the 20 x 30 image of the try-it cell."""

REPLACES = 'launch_grayscale_solution'
FAILS = {'check_grayscale': 'covers this image just enough'}
FAMILY = 'shapes'
SOURCE = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    kernel[(2, 2), (16, 16)](rgb, gray, height, width)
'''
