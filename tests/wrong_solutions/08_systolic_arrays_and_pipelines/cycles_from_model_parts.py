"""Multiplies the model's passes by its pass length."""
REPLACES = "systolic_cycles_solution"
FAMILY = "method"
FAILS = {"check_systolic_cycles": "calls `passes` from course/models/systolic.py"}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    return systolic.passes(k, n, rows, cols) * systolic.pass_cycles(m, rows, cols)
'''
