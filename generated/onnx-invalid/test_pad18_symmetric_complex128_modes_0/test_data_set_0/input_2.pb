Bconstant_valueJq=
×£T@…ëQ¸5@