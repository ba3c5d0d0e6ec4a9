
	BoutputJ
