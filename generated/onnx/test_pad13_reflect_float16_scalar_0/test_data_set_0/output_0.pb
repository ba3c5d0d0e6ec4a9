
BoutputJ½À