package config

//go:generate go run ./gen options_gen.go keys_gen.go
