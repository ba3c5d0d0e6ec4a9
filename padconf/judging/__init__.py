"""The judging layer: a runtime's outcome, the verdict on it, its failure identity (failure) and
triage against known upstream issues (upstream.yaml).
"""
