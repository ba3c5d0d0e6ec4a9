"""The gate's cases as a pytest suite: ``python -m pytest --pyargs padconf.suite --padconf-runtime
onnxruntime [--padconf-baseline FILE] [--padconf-spec ID ...]``; padconf.pytest_plugin
parametrises and judges it."""
