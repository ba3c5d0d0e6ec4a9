
BdataJ@O