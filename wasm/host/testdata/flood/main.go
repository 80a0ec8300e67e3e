//go:build wasip1

// Flood is a guest for the host's poll_oneoff tests: it accepts its
// host's connection on the pre-opened listener (descriptor 3) and writes
// -mib MiB to it as fast as it can, so that it must wait whenever the
// host reads slower than it writes (a write subscription), then reads the
// host's one-byte answer (a read subscription on the same socket). It
// prints "flood ok N" with the bytes written, or the error.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
)

func main() {
	mib := flag.Int("mib", 64, "MiB to write")
	flag.Parse()
	f := os.NewFile(3, "listener")
	ln, err := net.FileListener(f)
	if err != nil {
		fmt.Println("flood error:", err)
		os.Exit(1)
	}
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("flood error:", err)
		os.Exit(1)
	}
	buf := make([]byte, 1<<20)
	n := 0
	for range *mib {
		k, err := c.Write(buf)
		n += k
		if err != nil {
			fmt.Println("flood error:", err)
			os.Exit(1)
		}
	}
	if _, err := c.Read(buf[:1]); err != nil {
		fmt.Println("flood error: reading the answer:", err)
		os.Exit(1)
	}
	c.Close()
	fmt.Println("flood ok", n)
}
