package colltest

import (
	"fmt"

	"github.com/meshmpi/meshmpi/coll"
)

// Exec builds alg's plan for every rank (args[r] is rank r's call),
// verifies them statically, runs them on a fresh Fabric with the given
// buffers, and checks that every rank completed and nothing is left over.
func Exec(alg coll.Algorithm, args []coll.Args, send, recv [][]byte) error {
	n := len(args)
	plans := make([]*coll.Plan, n)
	for r := range args {
		p, err := coll.Build(alg, &args[r])
		if err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
		plans[r] = p
	}
	if err := Verify(plans); err != nil {
		return fmt.Errorf("%s: %w", plans[0].Name, err)
	}
	f := NewFabric(n)
	runs := make([]*coll.Run, n)
	for r, p := range plans {
		runs[r] = coll.NewRun(p, f.Transport(r), 7, nil)
		if err := runs[r].Bind(send[r], recv[r]); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return startAll(runs, f)
}

// startAll starts every rank's run on f and checks that every rank
// completed without an error and that nothing is left over.
func startAll(runs []*coll.Run, f *Fabric) error {
	for r, run := range runs {
		if err := run.Start(); err != nil {
			return fmt.Errorf("rank %d start: %w", r, err)
		}
	}
	for r, run := range runs {
		if !run.Finished() {
			return fmt.Errorf("rank %d: %s did not complete (a hang on a real network)", r, run.Plan().Name)
		}
		if err := run.Err(); err != nil {
			return fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return f.Pending()
}
