
BoutputJ„Q„Q„Q„Q„Q„Q