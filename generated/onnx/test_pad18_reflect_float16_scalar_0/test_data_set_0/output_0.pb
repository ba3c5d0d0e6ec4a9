
BoutputJÿû