
BdataJÿû