
Bconstant_valueJÿ{