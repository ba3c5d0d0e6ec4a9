Bconstant_valueJ
×£p=ªUÀ