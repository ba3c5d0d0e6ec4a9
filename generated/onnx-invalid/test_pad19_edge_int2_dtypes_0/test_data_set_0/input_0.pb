BdataJ
h*ÃÊn%{0*`