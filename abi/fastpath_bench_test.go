//go:build cgo

package abi

import (
	"testing"

	"github.com/meshmpi/meshmpi"
)

// The binding's own cost per point-to-point call, without a link and
// without the cgo crossing: the mpiabi_ exports called from Go in a loop
// on MPI_COMM_SELF (the memory path of a singleton world), against the
// same messages through the Go API. What "abi" costs over "go" is the
// binding's: handle and datatype resolution, the slice over C memory,
// the status, the error handler.
//
//	go test -run '^$' -bench P2PBinding -benchmem -count 6 ./abi

var (
	benchBuf    [8]byte
	benchGot    [8]byte
	benchStatus status
	benchReq    uintptr
)

// startSelf starts MPI in the test process once: MPI_Init twice is an
// error, and other tests of the package may have called it.
func startSelf(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts MPI in the test process")
	}
	state.mu.Lock()
	up := state.initialized && !state.finalized
	state.mu.Unlock()
	if up {
		return
	}
	if rc := mpiabi_Init(0, 0); rc != errSuccess {
		tb.Fatalf("MPI_Init: %d", rc)
	}
}

const mpiByte = 0x247

// p2pRounds are one message to self each, through the Go API or the
// binding: a blocking send then a blocking receive (8 bytes are eager),
// or an Isend, a Recv and a Wait.
func p2pRounds(tb testing.TB) []struct {
	name  string
	round func() error
} {
	c := state.self.c
	buf, got := benchBuf[:], benchGot[:]
	check := func(call string, rc int) error {
		if rc != errSuccess {
			return errorf(errOther, "%s: %d", call, rc)
		}
		return nil
	}
	return []struct {
		name  string
		round func() error
	}{
		{"go/send-recv", func() error {
			if err := meshmpi.Send(c, buf, 0, 1); err != nil {
				return err
			}
			_, err := meshmpi.Recv(c, got, 0, 1)
			return err
		}},
		{"abi/send-recv", func() error {
			if err := check("MPI_Send", int(mpiabi_Send(addr(&benchBuf[0]), 8, mpiByte, 0, 1, self))); err != nil {
				return err
			}
			return check("MPI_Recv", int(mpiabi_Recv(addr(&benchGot[0]), 8, mpiByte, 0, 1, self, 0)))
		}},
		{"abi/send-recv-status", func() error {
			if err := check("MPI_Send", int(mpiabi_Send(addr(&benchBuf[0]), 8, mpiByte, 0, 1, self))); err != nil {
				return err
			}
			return check("MPI_Recv", int(mpiabi_Recv(addr(&benchGot[0]), 8, mpiByte, 0, 1, self, addr(&benchStatus))))
		}},
		{"go/isend-recv-wait", func() error {
			r, err := meshmpi.Isend(c, buf, 0, 1)
			if err != nil {
				return err
			}
			if _, err := meshmpi.Recv(c, got, 0, 1); err != nil {
				return err
			}
			if _, err := r.Wait(nil); err != nil {
				return err
			}
			return r.Free()
		}},
		{"abi/isend-recv-wait", func() error {
			if err := check("MPI_Isend", int(mpiabi_Isend(addr(&benchBuf[0]), 8, mpiByte, 0, 1, self, addr(&benchReq)))); err != nil {
				return err
			}
			if err := check("MPI_Recv", int(mpiabi_Recv(addr(&benchGot[0]), 8, mpiByte, 0, 1, self, 0))); err != nil {
				return err
			}
			return check("MPI_Wait", int(mpiabi_Wait(addr(&benchReq), 0)))
		}},
	}
}

func BenchmarkP2PBinding(b *testing.B) {
	startSelf(b)
	for _, r := range p2pRounds(b) {
		b.Run(r.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := r.round(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
