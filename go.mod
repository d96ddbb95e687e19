module certa

go 1.26.8
