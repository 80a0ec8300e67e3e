// Command lib is libmpi_abi.so, meshmpi's implementation of the MPI
// standard ABI:
//
//	go build -buildmode=c-shared -o libmpi_abi.so ./abi/lib
//
// Package abi holds the binding; this main package only links it.
package main

import _ "github.com/meshmpi/meshmpi/abi"

func main() {}
