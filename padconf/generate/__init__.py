"""The generate layer: the fixed suite (padconf.suite.fixed) written as test data (writer, and the
standalone scripts beside it); padconf.suite.folders reads them back as cases."""
