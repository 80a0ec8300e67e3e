// Checkrank is the browser rank of cmd/signal's mixed-job test: it joins
// the job its environment names (meshmpi.Main) and runs rankcheck.Run,
// printing the summary line on success and exiting 1 on any mismatch.
package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest/rankcheck"
)

func main() {
	err := meshmpi.Main(4, func(world *meshmpi.Comm) error {
		s, err := rankcheck.Run(world)
		if err == nil {
			fmt.Println(s)
		}
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "checkrank:", err)
		os.Exit(1)
	}
}
