
Bconstant_valueJ-Ð