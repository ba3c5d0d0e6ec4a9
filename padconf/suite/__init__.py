"""The suite layer: case sources beyond drawing. The fixed suite (``fixed``: the spec documents'
worked examples and the drawn cases that depend on padconf's version only, which the gate runs
and ``generate`` writes) and test folders read back as cases (``folders``: ``run --cases``)."""
