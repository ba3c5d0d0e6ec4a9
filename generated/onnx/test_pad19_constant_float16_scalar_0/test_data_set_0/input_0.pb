
BdataJ6Ç