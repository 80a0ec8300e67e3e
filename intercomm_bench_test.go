package meshmpi

import (
	"errors"
	"fmt"
	"testing"
)

// BenchmarkIntercomm measures intercommunicator latency on memory links,
// as Intercomm/<collective>/<a>+<b>/8B/<form>: Allreduce of one float64
// (each group gets the other's sum) and Bcast of 8 bytes from rank 0 of
// group A, blocking, nonblocking (I… then Wait) and persistent (…Init once,
// then Start+Wait). Rank 0 times from a barrier before the loop to one
// after it; allocs/op counts every rank's allocations. For example
//
//	go test -run XXX -bench Intercomm -benchmem .
func BenchmarkIntercomm(b *testing.B) {
	for _, name := range []string{"Allreduce", "Bcast"} {
		for _, sz := range [][2]int{{4, 4}} {
			for _, form := range forms {
				b.Run(fmt.Sprintf("%s/%d+%d/8B/%s", name, sz[0], sz[1], form.name), func(b *testing.B) {
					interLatency(b, name, sz, form.form)
				})
			}
		}
	}
}

func interLatency(b *testing.B, name string, sz [2]int, form collForm) {
	b.ReportAllocs()
	err := Run(sz[0]+sz[1], func(w *Comm) error {
		x, err := newInter(w, sz[0])
		if err != nil {
			return err
		}
		send, recv, buf := []float64{float64(w.Rank())}, []float64{0}, make([]byte, 8)
		root := x.root(0, 0)
		call := func(f collForm) (*Request, error) {
			if name == "Bcast" {
				return formCall(f, func() error { return Bcast(x.c, buf, root) }, func() (*Request, error) { return Ibcast(x.c, buf, root) }, func() (*Request, error) { return BcastInit(x.c, buf, root) })
			}
			return formCall(f, func() error { return Allreduce(x.c, send, recv, Sum) }, func() (*Request, error) { return Iallreduce(x.c, send, recv, Sum) }, func() (*Request, error) { return AllreduceInit(x.c, send, recv, Sum) })
		}
		return errors.Join(timeCalls(b, w, form, call), x.c.Free())
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/op")
}
