"""The generate layer: the fixed suite, its test data written (testdata_write, scripts) and test
data read back as cases (testdata_read).
"""
