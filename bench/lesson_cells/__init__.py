"""The GPU cells of the lessons, as functions: each module measures one thing on a GPU (a dict that JSON
can hold) and shows it, for the live device and for every device recorded in bench/results/.

A lesson's GPU cell calls these functions in GPU mode and shows the recorded results in CPU mode;
bench/gpu_lessons.py calls the same functions to record them. Importing a module needs no GPU.
"""
