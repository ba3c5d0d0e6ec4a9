"""One test per case of the gate and placement of the runtime, e.g.
``test_pad[onnx/Pad-19-reflect-float-crop_mixed-3-inputs]``: padconf.pytest.plugin gives the
parameters (pytest_generate_tests) and judges each outcome as ``padconf gate`` does."""


def test_pad(padconf_case, padconf_check):
    padconf_check(padconf_case)
