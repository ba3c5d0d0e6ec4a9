"""The minimize layer: a failing case cut down and bundled as a standalone reproducer.
"""
