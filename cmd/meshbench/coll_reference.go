//go:build !js && !wasip1

package main

import (
	"fmt"
	"io"
	"strconv"
)

// refTest is the reference benchmark's test for a collective and form
// of -mode coll ("" for none: collbench.c has no scan, no
// reducescatterblock, and only Allreduce's nonblocking and persistent
// forms, which it times back to back, not between barriers).
func refTest(name, form string) string {
	switch {
	case form == "blocking" && name != "scan" && name != "reducescatterblock":
		return name
	case name == "allreduce" && form == "nonblocking":
		return "iallreduce"
	case name == "allreduce" && form == "persistent":
		return "pallreduce"
	}
	return ""
}

// collKey names one figure of -mode coll.
type collKey struct {
	name, form string
	ranks      int
	size       int
}

// runCollReference is -mode coll with -mpich: rounds of meshmpi's tables
// (memory links) interleaved with runs of the MPI reference (run.sh, each
// of impls, shared memory) on the same rank counts, so both see the same
// machine; it prints every round's figures and then their medians with
// meshmpi's ratio to the better reference.
func runCollReference(out io.Writer, lk *links, cfg collConfig, rounds int, script string, impls []string) error {
	mesh := map[collKey][]float64{}
	ref := map[string]map[collKey][]float64{}
	var order []collKey
	fmt.Fprintf(out, "# every round's figures, us (meshmpi on memory links in process; the reference over shm)\n")
	fmt.Fprintf(out, "%-8s%-10s%-20s%-13s%6s%9s%10s\n", "# Round", "Impl", "Coll", "Form", "Ranks", "Size", "us")
	for round := range rounds {
		for _, n := range cfg.ranks {
			for _, name := range cfg.colls {
				sizes := cfg.sizes
				if name == "barrier" {
					sizes = []int{0}
				}
				for _, form := range cfg.forms {
					figs, err := collTable(lk, name, form, n, sizes, cfg.iters, cfg.hints())
					if err != nil {
						return fmt.Errorf("%s %s on %d ranks, round %d: %w", name, form, n, round+1, err)
					}
					for i, size := range sizes {
						k := collKey{name, form, n, size}
						if round == 0 {
							order = append(order, k)
						}
						mesh[k] = append(mesh[k], figs[i])
						fmt.Fprintf(out, "%-8d%-10s%-20s%-13s%6d%9d%10.2f\n", round+1, "meshmpi", name, form, n, size, figs[i])
					}
				}
			}
			for _, impl := range impls {
				figs, err := runReference(script, impl, n)
				if err != nil {
					return fmt.Errorf("round %d: %w", round+1, err)
				}
				if ref[impl] == nil {
					ref[impl] = map[collKey][]float64{}
				}
				for _, k := range order {
					if k.ranks != n {
						continue
					}
					if v, ok := figs[refTest(k.name, k.form)][k.size]; ok {
						ref[impl][k] = append(ref[impl][k], v)
						fmt.Fprintf(out, "%-8d%-10s%-20s%-13s%6d%9d%10.2f\n", round+1, impl, k.name, k.form, n, k.size, v)
					}
				}
			}
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "# meshmpi (memory links, in process) vs %v (run.sh, shm): medians of %d interleaved rounds, us; ratio = meshmpi / the better reference\n", impls, rounds)
	fmt.Fprintf(out, "%-20s%6s  %-12s%9s%12s", "# Coll", "Ranks", "Form", "Size", "meshmpi")
	for _, impl := range impls {
		fmt.Fprintf(out, "%12s", impl)
	}
	fmt.Fprintf(out, "%8s\n", "Ratio")
	for _, k := range order {
		m := medianOf(mesh[k])
		fmt.Fprintf(out, "%-20s%6d  %-12s%9d%12.2f", k.name, k.ranks, k.form, k.size, m)
		best := 0.0
		for _, impl := range impls {
			v := medianOf(ref[impl][k])
			fmt.Fprintf(out, "%12s", fmtRef(v))
			if v > 0 && (best == 0 || v < best) {
				best = v
			}
		}
		ratio := "-"
		if best > 0 {
			ratio = strconv.FormatFloat(m/best, 'f', 2, 64)
		}
		fmt.Fprintf(out, "%8s\n", ratio)
	}
	return nil
}
