// Probe is cmd/jsrun's test program: it echoes its arguments and an
// environment variable, reads a file relative to the working directory,
// round-trips a temporary file, and exits with status 3.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	fmt.Println("args:", strings.Join(os.Args[1:], " "))
	fmt.Fprintln(os.Stderr, "env:", os.Getenv("MESHMPI_PROBE"))
	seed, err := os.ReadFile("testdata/seed.txt")
	if err != nil {
		fmt.Println("read:", err)
		os.Exit(1)
	}
	fmt.Print("seed: ", string(seed))
	dir, err := os.MkdirTemp("", "probe-")
	if err == nil {
		p := filepath.Join(dir, "f")
		if err = os.WriteFile(p, []byte("temp ok"), 0o644); err == nil {
			var b []byte
			b, err = os.ReadFile(p)
			fmt.Println("temp:", string(b))
		}
		os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Println("temp:", err)
		os.Exit(1)
	}
	os.Exit(3)
}
