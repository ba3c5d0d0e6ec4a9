"""The minimize layer: a failing case cut down and bundled as a standalone reproducer.
"""

# Here, not in padconf.minimize.minimize, so that the command line names it without importing
# the minimize layer (bundles, probes, shrinking: 20 modules, a fifth of the command line's
# import time) for every command.
DEFAULT_TIME_LIMIT_S = 60.0  # seconds of shrinking per failure
