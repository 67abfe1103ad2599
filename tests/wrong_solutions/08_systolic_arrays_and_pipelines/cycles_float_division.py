"""Uses true division and math.ceil on floats: exact only while the numbers stay small."""
REPLACES = "systolic_cycles_solution"
FAMILY = "method"
FAILS = {"check_systolic_cycles": "should return an integer count of cycles"}
SOURCE = '''
def systolic_cycles(m, k, n, rows, cols):
    return float(math.ceil(k / rows) * math.ceil(n / cols) * (m + rows + cols - 2))
'''
