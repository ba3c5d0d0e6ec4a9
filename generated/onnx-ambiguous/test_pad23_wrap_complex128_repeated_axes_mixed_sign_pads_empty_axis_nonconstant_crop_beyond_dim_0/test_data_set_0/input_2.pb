Bconstant_valueJ
вёp=╙XюмллллЛN@