"""The pytest face of the gate: the plugin (``pytest11``) and the suite it parametrises."""
