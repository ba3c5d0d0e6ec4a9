
BdataJãQV