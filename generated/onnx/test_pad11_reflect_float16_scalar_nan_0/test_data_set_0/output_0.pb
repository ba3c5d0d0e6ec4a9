
BoutputJˆT