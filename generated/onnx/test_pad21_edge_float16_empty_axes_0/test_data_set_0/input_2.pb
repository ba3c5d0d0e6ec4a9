
Bconstant_valueJ	V