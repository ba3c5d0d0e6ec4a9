"""The pytest plugin's entry point (``pytest11 = padconf.pytest_plugin``), kept by this name for
installed metadata and ``-p padconf.pytest_plugin``; the plugin is padconf.gate.pytest_plugin."""
from padconf.gate.pytest_plugin import *  # noqa: F403  (pytest finds the hooks and fixtures by name)
