"""The extra runs that place a minimized failure: root cause, controls and experiments."""
