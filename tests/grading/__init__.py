"""The fixture class of fake learners for the classroom grader (tests/test_grading.py)."""
