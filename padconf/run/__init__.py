"""The run layer: running cases on runtimes (runner, draw_child) and the run directory it records
them in (results).
"""
