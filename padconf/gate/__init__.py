"""The gate layer: judging a runtime against a baseline (gate, baseline, explore) and the pytest
plugin over the same cases.
"""
