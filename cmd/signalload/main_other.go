//go:build !unix

package main

import (
	"fmt"
	"os"
)

// main says what it cannot do: the generator needs unix's resource
// limits, rusage and process control.
func main() {
	fmt.Fprintln(os.Stderr, "signalload: runs on unix systems only")
	os.Exit(2)
}
