// Mixedrank is the rank program of the cross-target tests and
// benchmarks, the same source for every target: built for GOOS=js it
// runs in a run page, for GOOS=wasip1 under wasm/host, and native ranks
// run the same ranksuite.Run in-process. It joins the job its
// environment names (meshmpi.JobFromEnv) and does the task its command
// line gives (ranksuite.ParseTask):
//
//	-mode suite                    ranksuite.Suite and the direct-links check
//	-mode echo -peer R             serve rank R's benchmarks
//	-mode drive -peer R -lat … -bw …  measure against rank R, print the figures
//	-mode abort -peer R            rank R calls Abort(5), the others wait for a message
//
// It exits 0 when the task and Finalize succeeded, 1 otherwise.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mixedrank:", err)
		os.Exit(1)
	}
}

func run() error {
	task, err := ranksuite.ParseTask(os.Args[1:])
	if err != nil {
		return err
	}
	spec, ok, err := meshmpi.JobFromEnv()
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("not started into a job: run it from a run page, a WASI host or meshrun")
	}
	ctx, cancel := context.WithTimeout(context.Background(), meshmpi.DefaultJoinTimeout)
	s, err := meshmpi.Join(ctx, spec)
	cancel()
	if err != nil {
		return err
	}
	return ranksuite.Run(s, task, os.Stdout)
}
