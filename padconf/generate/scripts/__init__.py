"""Standalone scripts that padconf generate copies, verbatim, beside the test data it writes.

They run where padconf may not be installed, so they import nothing from padconf.
"""
