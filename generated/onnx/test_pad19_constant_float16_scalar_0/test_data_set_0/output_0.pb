
BoutputJ6Ç