// Laterank is a rank of a job that grows (meshrun --max): it joins with
// Init, prints its rank and its world's size ("rank 0 of 1 ready": a
// late rank's world is its own), and Finalizes. With -start FILE it
// waits for FILE to exist before Init, with -hold FILE after printing,
// before Finalize: the test decides when the job forms and when it ends
// (natively only: a WASI guest sees no files). With -crash it exits
// with status 3 once it printed, without Finalize, as a crash would.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/meshmpi/meshmpi"
)

func main() {
	start := flag.String("start", "", "wait for this file before Init")
	hold := flag.String("hold", "", "wait for this file before Finalize")
	crash := flag.Bool("crash", false, "exit with status 3 after printing, without Finalize")
	flag.Parse()
	waitFor(*start)
	world, err := meshmpi.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, "laterank:", err)
		os.Exit(1)
	}
	fmt.Printf("rank %d of %d ready\n", world.Rank(), world.Size())
	if *crash {
		os.Exit(3)
	}
	waitFor(*hold)
	if err := meshmpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "laterank: finalize:", err)
		os.Exit(1)
	}
	fmt.Printf("rank %d done\n", world.Rank())
}

// waitFor returns once path exists ("": at once).
func waitFor(path string) {
	if path == "" {
		return
	}
	for {
		_, err := os.Stat(path)
		if !errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
