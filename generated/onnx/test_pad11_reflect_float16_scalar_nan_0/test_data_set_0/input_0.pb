
BdataJˆT