
Bconstant_valueJлб