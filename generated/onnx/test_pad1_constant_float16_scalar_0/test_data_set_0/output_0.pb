
BoutputJdP