
Bconstant_valueJ0Ö