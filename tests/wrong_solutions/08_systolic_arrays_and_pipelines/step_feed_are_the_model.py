"""Hands the check the lesson's model itself: systolic.step and systolic.feed, imported by the setup cell."""
REPLACES = "systolic_solution"
FAMILY = "method"
FAILS = {"check_systolic": "course's own code"}
SOURCE = '''
systolic_step = systolic.step
skewed_feed = systolic.feed
'''
