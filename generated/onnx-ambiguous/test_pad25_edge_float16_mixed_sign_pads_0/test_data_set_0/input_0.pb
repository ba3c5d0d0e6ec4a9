
BdataJÿ{XÎ3·