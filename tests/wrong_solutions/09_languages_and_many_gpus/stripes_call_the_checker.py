"""Returns the check's own layout, tasks.ring_positions."""
REPLACES = "stripes_solution"
FAMILY = "method"
FAILS = {"check_stripes": "calls `ring_positions` from course/tasks/part09.py"}
SOURCE = '''
def stripes(n, p):
    return tasks.ring_positions(n, p, "striped")
'''
