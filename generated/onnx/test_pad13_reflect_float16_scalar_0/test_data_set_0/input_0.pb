
BdataJ½À