// Linkrank prints how each rank reaches every other: every pair talks
// (a 3 MiB message each way, checked), then each rank prints
// "rank R link to P: KIND" for every other rank P (Comm.LinkInfo).
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi"
)

func main() {
	err := meshmpi.Main(2, func(world *meshmpi.Comm) error {
		rank, size := world.Rank(), world.Size()
		out := make([]byte, 3<<20)
		for i := range out {
			out[i] = byte(i*7 + rank)
		}
		in := make([]byte, len(out))
		for r := range size {
			if r == rank {
				continue
			}
			if _, err := meshmpi.Sendrecv(world, out, r, 1, in, r, 1); err != nil {
				return err
			}
			want := make([]byte, len(out))
			for i := range want {
				want[i] = byte(i*7 + r)
			}
			if !bytes.Equal(in, want) {
				return fmt.Errorf("rank %d: the bytes from rank %d differ", rank, r)
			}
		}
		for r := range size {
			if r == rank {
				continue
			}
			li, err := world.LinkInfo(r)
			if err != nil {
				return err
			}
			fmt.Printf("rank %d link to %d: %s\n", rank, r, li.Link)
		}
		return meshmpi.Barrier(world)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
