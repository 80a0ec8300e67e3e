//go:build cgo

package abi

import (
	"testing"
	"unsafe"

	"github.com/meshmpi/meshmpi"
)

// addr passes Go memory where the binding takes a C address: only
// package variables, which never move (a stack would).
func addr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

var (
	allocCol    uintptr
	allocReq    uintptr
	allocStatus status
	allocM      [20]float64
	allocGot    [20]float64
)

// A strided column sent to self with Isend and received with Recv: the
// binding's derived-type path (handle lookup, typed view, the Go API's
// typed calls) allocates no more per message than the predefined path,
// in a fresh process's singleton world.
func TestDerivedP2PAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MPI in the test process")
	}
	if rc := mpiabi_Init(0, 0); rc != errSuccess {
		t.Fatalf("MPI_Init: %d", rc)
	}
	const double = 0x214
	if rc := mpiabi_Type_vector(4, 1, 5, double, addr(&allocCol)); rc != errSuccess {
		t.Fatalf("MPI_Type_vector: %d", rc)
	}
	if rc := mpiabi_Type_commit(addr(&allocCol)); rc != errSuccess {
		t.Fatalf("MPI_Type_commit: %d", rc)
	}
	m, got, req, st := &allocM, &allocGot, &allocReq, &allocStatus
	for i := range m {
		m[i] = float64(i)
	}
	round := func(dt uintptr, n int32) func() {
		return func() {
			if rc := mpiabi_Isend(addr(&m[0]), n, dt, 0, 1, self, addr(req)); rc != errSuccess {
				t.Fatalf("MPI_Isend: %d", rc)
			}
			if rc := mpiabi_Recv(addr(&got[0]), n, dt, 0, 1, self, addr(st)); rc != errSuccess {
				t.Fatalf("MPI_Recv: %d", rc)
			}
			if rc := mpiabi_Wait(addr(req), 0); rc != errSuccess {
				t.Fatalf("MPI_Wait: %d", rc)
			}
		}
	}
	pre := testing.AllocsPerRun(200, round(double, 4))
	der := testing.AllocsPerRun(200, round(allocCol, 1))
	for i := range 4 {
		if got[i*5] != float64(i*5) {
			t.Fatalf("column row %d: %g", i, got[i*5])
		}
	}
	// the same through the Go API: what its typed calls cost over its
	// generic ones is not the binding's
	c := state.self.c
	g, _ := typeOf(allocCol)
	buf, gotb := meshmpi.Bytes(m[:]), meshmpi.Bytes(got[:])
	goRound := func(typed bool) func() {
		return func() {
			var r *meshmpi.Request
			var err error
			if typed {
				r, err = meshmpi.IsendTyped(c, buf, 1, g.g, 0, 1)
			} else {
				r, err = meshmpi.Isend(c, m[:4], 0, 1)
			}
			if err == nil && typed {
				_, err = meshmpi.RecvTyped(c, gotb, 1, g.g, 0, 1)
			} else if err == nil {
				_, err = meshmpi.Recv(c, got[:4], 0, 1)
			}
			if err == nil {
				_, err = r.Wait(nil)
			}
			if err == nil {
				err = r.Free()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	goPre, goDer := testing.AllocsPerRun(200, goRound(false)), testing.AllocsPerRun(200, goRound(true))
	t.Logf("allocations per message: predefined %.1f, derived column %.1f; the Go API alone: %.1f, %.1f", pre, der, goPre, goDer)
	slack := 0.0
	if raceEnabled {
		slack = 1 // the race detector's instrumentation allocates where a plain build does not
	}
	if der-pre > goDer-goPre+slack {
		t.Errorf("the binding adds %.1f allocations per derived-type message", (der-pre)-(goDer-goPre))
	}
}
