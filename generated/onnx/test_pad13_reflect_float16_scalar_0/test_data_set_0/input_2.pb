
Bconstant_valueJÿû