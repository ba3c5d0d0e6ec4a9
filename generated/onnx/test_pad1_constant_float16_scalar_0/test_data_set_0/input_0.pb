
BdataJdP