"""The spec layer: the spec documents loaded and checked (loader, spec_schema.json) and the
arithmetic they define (reference). The YAML documents themselves are data in padconf/spec/documents.
"""
