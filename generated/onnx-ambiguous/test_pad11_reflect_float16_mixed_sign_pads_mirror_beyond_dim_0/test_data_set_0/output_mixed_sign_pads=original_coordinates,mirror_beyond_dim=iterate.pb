
BoutputJV„QV„QV„Q