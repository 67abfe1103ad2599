"""Imports the lesson's own tiled kernel instead of writing it."""
REPLACES = "tiled_matmul_solution"
FAMILY = "method"
FAILS = {"check_tiled_matmul": "course's own code"}
SOURCE = '''
from course.kernels.matmul import matmul_tiled16 as tiled_matmul
'''
