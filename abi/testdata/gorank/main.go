// Command gorank is the Go side of abi's mixed-job test: the calls of
// testdata/mixed.c, in the same order, through the Go API.
package main

import (
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gorank:", err)
		os.Exit(1)
	}
}

func run() error {
	w, err := meshmpi.Init()
	if err != nil {
		return err
	}
	rank, size := w.Rank(), w.Size()
	sum := []int32{0}
	if err := meshmpi.Allreduce(w, []int32{int32(rank)}, sum, meshmpi.Sum); err != nil {
		return err
	}
	if int(sum[0]) != size*(size-1)/2 {
		return fmt.Errorf("allreduce %d", sum[0])
	}
	x := make([]float64, 4)
	if err := meshmpi.Bcast(w, x, 0); err != nil {
		return err
	}
	if x[3] != 4.5 {
		return fmt.Errorf("bcast %g", x[3])
	}
	got := []int64{-1}
	next, prev := (rank+1)%size, (rank+size-1)%size
	if _, err := meshmpi.Sendrecv(w, []int64{int64(rank)}, next, 5, got, prev, 5); err != nil {
		return err
	}
	if got[0] != int64(prev) {
		return fmt.Errorf("ring %d", got[0])
	}
	big, all := make([]float64, 10000), make([]float64, 10000)
	for i := range big {
		big[i] = float64(rank + i)
	}
	if err := meshmpi.Reduce(w, big, all, meshmpi.Max, size-1); err != nil {
		return err
	}
	if rank == size-1 && all[9999] != float64(size-1+9999) {
		return fmt.Errorf("reduce %g", all[9999])
	}
	ranks := make([]int32, size)
	if err := meshmpi.Gather(w, []int32{int32(rank)}, ranks, 1); err != nil {
		return err
	}
	if err := meshmpi.Barrier(w); err != nil {
		return err
	}
	fmt.Printf("mixed ok: Go rank %d of %d\n", rank, size)
	return meshmpi.Finalize()
}
