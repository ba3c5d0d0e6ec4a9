BoutputJ×£p=
×@