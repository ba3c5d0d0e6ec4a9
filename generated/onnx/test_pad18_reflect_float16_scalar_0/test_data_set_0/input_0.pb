
BdataJÿû