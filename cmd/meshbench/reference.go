//go:build !js && !wasip1

package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// refFigures is one run of the MPI reference benchmark (run.sh, over
// collbench.c): test name → message size → figure, µs for latencies
// (pingpong is one way: its round trip halved), MB/s for bw.
type refFigures map[string]map[int]float64

// runReference runs script (the reference's run.sh) with impl (mpich or
// openmpi) on np ranks over shared memory and parses the lines it
// prints: R <impl> <np> <test> <bytes> <avg> <min> <max> <iters>.
func runReference(script, impl string, np int) (refFigures, error) {
	out, err := exec.Command("bash", script, strconv.Itoa(np), impl, "shm").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			lines := strings.Split(strings.TrimSpace(string(ee.Stderr)), "\n")
			err = fmt.Errorf("%w: %s", err, lines[len(lines)-1])
		}
		return nil, fmt.Errorf("%s %d %s shm: %w", script, np, impl, err)
	}
	figs := refFigures{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "R" {
			continue
		}
		size, err1 := strconv.Atoi(f[4])
		v, err2 := strconv.ParseFloat(f[5], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if figs[f[3]] == nil {
			figs[f[3]] = map[int]float64{}
		}
		figs[f[3]][size] = v
	}
	if len(figs) == 0 {
		return nil, fmt.Errorf("%s %d %s shm printed no figures", script, np, impl)
	}
	return figs, nil
}
