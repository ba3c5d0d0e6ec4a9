
BoutputJÔ