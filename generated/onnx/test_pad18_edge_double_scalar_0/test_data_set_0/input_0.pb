BdataJ×£p=
×@