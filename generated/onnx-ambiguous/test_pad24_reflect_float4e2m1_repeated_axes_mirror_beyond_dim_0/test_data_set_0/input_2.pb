Bconstant_valueJ
