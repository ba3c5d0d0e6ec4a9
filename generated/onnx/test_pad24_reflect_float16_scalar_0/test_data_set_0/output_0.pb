
BoutputJ@O