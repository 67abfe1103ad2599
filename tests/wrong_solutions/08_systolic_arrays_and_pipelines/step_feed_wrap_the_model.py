"""Wraps the lesson's model in functions of the right names."""
REPLACES = "systolic_solution"
FAMILY = "method"
FAILS = {"check_systolic": "calls `feed` from course/models/systolic.py"}
SOURCE = '''
def systolic_step(weights, a, s, x_left):
    return systolic.step(weights, a, s, x_left)


def skewed_feed(X, cycle, rows):
    return systolic.feed(X, cycle, rows)
'''
