"""The report layer: a run's summary, in text and HTML.
"""
