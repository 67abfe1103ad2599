"""Imports the lesson's Triton softmax kernel."""
REPLACES = "softmax_kernel_solution"
FAMILY = "method"
FAILS = {"check_softmax_kernel": "course's own code"}
SOURCE = '''
from course.kernels.triton_kernels import softmax_kernel
'''
