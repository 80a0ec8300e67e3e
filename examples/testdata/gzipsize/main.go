// Command gzipsize prints a file's length gzipped with compress/gzip at
// BestCompression and at DefaultCompression, as TestBrowserBuildSize
// measures a browser build: the examples' tests run it, built without the
// race detector, when they run with it, under which compress/gzip takes
// some ten times the CPU (9 CPU-seconds a 6 MB module, against 0.9).
//
//	gzipsize file
package main

import (
	"compress/gzip"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gzipsize file")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gzipsize:", err)
		os.Exit(1)
	}
	best, err := gzipLen(data, gzip.BestCompression)
	if err == nil {
		var def int
		def, err = gzipLen(data, gzip.DefaultCompression)
		fmt.Println(best, def)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gzipsize:", err)
		os.Exit(1)
	}
}

// gzipLen is data's length gzipped at level.
func gzipLen(data []byte, level int) (int, error) {
	var n counter
	w, err := gzip.NewWriterLevel(&n, level)
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(data); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return int(n), nil
}

// counter counts the bytes written to it.
type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}
