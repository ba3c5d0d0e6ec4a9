
BdataJÔ