BdataJ
