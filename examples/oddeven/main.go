// Oddeven sorts an array spread over the ranks with odd–even transposition
// sort, the parallel sort of MPI courses: neighbors trade their blocks
// with Sendrecv and keep the lower or the upper half of the two.
//
// Each rank makes its own block of the -size keys (key i is a hash of i,
// so no rank needs another's input; blocks differ in length by at most
// one) and sorts it. Then come phases. In an even phase ranks 0|1, 2|3, …
// pair up, in an odd phase ranks 1|2, 3|4, …; a rank without a partner (at
// either end) sits the phase out. Partners swap blocks with one Sendrecv
// (a send and a receive that cannot deadlock against each other, which a
// Send then Recv on both sides could, once messages are too big to buffer)
// and merge them: the lower rank keeps the smallest keys, as many as it
// had, the upper rank the largest.
//
// When every block has the same length, n phases sort n blocks (the
// textbook's bound). With uneven blocks they may not (blocks of 2, 1, 1, 1
// need more), so the ranks ask after every pair of phases, with an
// Allreduce of "did my block change" (Max), whether anything moved: once
// nothing did in an even and an odd phase, every neighbor pair is in
// order and the array is sorted.
//
// Rank 0 then Gathervs the blocks and compares them with the keys sorted
// sequentially; the program exits non-zero if they differ. Every rank
// needs a key at least: a rank with none would split the line of ranks in
// two, which no key could cross.
//
// Run it with
//
//	go run ./examples/oddeven -n 4 -size 1000
//
// or as a job of separate processes under meshrun.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/meshmpi/meshmpi"
)

const tagBlock = 0

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	size := flag.Int("size", 1000, "number of keys to sort")
	flag.Parse()
	if *size < 1 {
		fmt.Fprintln(os.Stderr, "oddeven: -size must be positive")
		os.Exit(2)
	}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		sorted, phases, err := sortKeys(world, *size)
		if err != nil || world.Rank() != 0 {
			return err
		}
		return check(world.Size(), *size, phases, sorted)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "oddeven:", err)
		os.Exit(1)
	}
}

// key is key i of the array: a number below a million, hashed from i
// (SplitMix64's mixer).
func key(i int) int64 {
	z := uint64(i)*0x9e3779b97f4a7c15 + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int64(z % 1_000_000)
}

// split returns the first index and the length of block r of p for size
// keys: the first size%p blocks are one longer.
func split(size, p, r int) (first, length int) {
	length = size / p
	first = r*length + min(r, size%p)
	if r < size%p {
		length++
	}
	return first, length
}

// mergeSplit merges the sorted blocks mine and theirs and keeps in mine
// the lowest len(mine) keys (keepLow) or the highest. It reports whether
// mine changed.
func mergeSplit(mine, theirs []int64, keepLow bool) bool {
	all := append(slices.Clone(mine), theirs...)
	slices.Sort(all) // a linear merge would do; sorting is plainer
	var keep []int64
	if keepLow {
		keep = all[:len(mine)]
	} else {
		keep = all[len(all)-len(mine):]
	}
	changed := !slices.Equal(mine, keep)
	copy(mine, keep)
	return changed
}

// sortKeys is what every rank runs. It returns the sorted array at rank 0
// (nil elsewhere) and the number of phases.
func sortKeys(world *meshmpi.Comm, size int) ([]int64, int, error) {
	rank, p := world.Rank(), world.Size()
	if size < p {
		return nil, 0, fmt.Errorf("%d keys cannot be split over %d ranks: each needs one at least", size, p)
	}
	first, length := split(size, p, rank)
	mine := make([]int64, length)
	for i := range mine {
		mine[i] = key(first + i)
	}
	slices.Sort(mine)

	phases := 0
	for {
		changed := []int32{0}
		for parity := range 2 { // an even phase, then an odd one
			// my partner: the rank above me if rank+parity is even, else
			// the rank below
			partner := rank + 1
			if (rank+parity)%2 == 1 {
				partner = rank - 1
			}
			if partner >= 0 && partner < p {
				_, theirLength := split(size, p, partner)
				theirs := make([]int64, theirLength)
				if _, err := meshmpi.Sendrecv(world, mine, partner, tagBlock, theirs, partner, tagBlock); err != nil {
					return nil, 0, err
				}
				if mergeSplit(mine, theirs, rank < partner) {
					changed[0] = 1
				}
			}
			phases++
		}
		if err := meshmpi.Allreduce(world, meshmpi.InPlace[int32](), changed, meshmpi.Max); err != nil {
			return nil, 0, err
		}
		if changed[0] == 0 {
			break
		}
	}

	// gather the sorted blocks at rank 0
	var counts, displs []int
	var sorted []int64
	if rank == 0 {
		counts, displs = make([]int, p), make([]int, p)
		for r := range p {
			displs[r], counts[r] = split(size, p, r)
		}
		sorted = make([]int64, size)
	}
	if err := meshmpi.Gatherv(world, mine, sorted, counts, displs, 0); err != nil {
		return nil, 0, err
	}
	return sorted, phases, nil
}

// check compares the result with the keys sorted sequentially and prints
// it.
func check(ranks, size, phases int, got []int64) error {
	want := make([]int64, size)
	for i := range want {
		want[i] = key(i)
	}
	slices.Sort(want)
	fmt.Printf("%d keys on %d ranks sorted in %d phases: smallest %d, median %d, largest %d\n",
		size, ranks, phases, got[0], got[size/2], got[size-1])
	if !slices.Equal(got, want) {
		return fmt.Errorf("the result differs from the keys sorted sequentially")
	}
	fmt.Println("ok")
	return nil
}
