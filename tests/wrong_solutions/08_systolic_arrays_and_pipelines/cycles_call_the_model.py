"""Returns the model's count instead of deriving the formula."""
REPLACES = "systolic_cycles_solution"
FAMILY = "method"
FAILS = {"check_systolic_cycles": "calls `cycle_count` from course/models/systolic.py"}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    return systolic.cycle_count(m, k, n, rows, cols)
'''
