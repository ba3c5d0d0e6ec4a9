"""The core layer: padconf's errors, closed vocabularies, dtypes, reading untrusted files,
escaping, versions and progress lines.
"""
