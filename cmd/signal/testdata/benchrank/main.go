// Benchrank is the browser rank of cmd/signal's BenchmarkBrowserLink: it
// joins a 2-rank job and runs rankcheck.Bench; rank 0 prints the figures.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest/rankcheck"
)

func main() {
	iters := flag.Int("iters", 1000, "8-byte round trips")
	msgs := flag.Int("msgs", 32, "1 MiB messages")
	flag.Parse()
	err := meshmpi.Main(2, func(world *meshmpi.Comm) error {
		f, err := rankcheck.Bench(world, *iters, *msgs)
		if err == nil && world.Rank() == 0 {
			fmt.Println(f)
		}
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrank:", err)
		os.Exit(1)
	}
}
