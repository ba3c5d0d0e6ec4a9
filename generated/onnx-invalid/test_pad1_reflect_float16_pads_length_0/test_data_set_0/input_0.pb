
BdataJÎ