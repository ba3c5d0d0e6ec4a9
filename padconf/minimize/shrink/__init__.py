"""Shrinking a failing case: the greedy loop and the simplifications it tries."""
