"""The cases layer: a case, what its spec says of it (classify), the spec's examples, drawn cases
(strategies) and the ONNX model of a case.
"""
