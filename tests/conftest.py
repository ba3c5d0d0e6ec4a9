"""Hypothesis profiles come from padconf.strategies (ci / default / thorough); CI sets
HYPOTHESIS_PROFILE=ci, a developer may pass --hypothesis-profile=thorough."""
import os

from hypothesis import settings

from padconf.strategies import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
