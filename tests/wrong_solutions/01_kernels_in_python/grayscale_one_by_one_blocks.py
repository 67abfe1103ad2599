"""Launches blocks of 1 x 1 thread, one block per pixel: every warp runs 1 thread of 32."""

REPLACES = 'launch_grayscale_solution'
FAILS = {'check_grayscale': '2-D blocks of 16 × 16 threads'}
FAMILY = 'method'
SOURCE = '''
def launch_grayscale(kernel, rgb, gray, height, width):
    kernel[(width, height), (1, 1)](rgb, gray, height, width)
'''
