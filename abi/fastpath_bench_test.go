//go:build cgo

package abi

import (
	"runtime"
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

var errClass int32

// longDoubleBuf holds two C long doubles (16 bytes each on x86-64 and
// arm64 Linux).
var longDoubleBuf [32]byte

// The fast path keeps every error of the checked path: each bad argument
// of MPI_Send and MPI_Recv raises its class under MPI_ERRORS_RETURN, and
// the cases the fast path leaves to the checked one (MPI_DATATYPE_NULL
// with count 0) still succeed.
func TestP2PFastPathErrors(t *testing.T) {
	startSelf(t)
	if rc := mpiabi_Comm_set_errhandler(self, ehReturn); rc != errSuccess {
		t.Fatalf("MPI_Comm_set_errhandler: %d", rc)
	}
	defer mpiabi_Comm_set_errhandler(self, ehFatal)
	buf := addr(&benchBuf[0])
	cases := []struct {
		name  string
		buf   uintptr
		n     int32
		dt    uintptr
		peer  int32
		tag   int32
		comm  uintptr
		class int32
	}{
		{"ok", buf, 8, mpiByte, 0, 1, self, errSuccess},
		{"proc null, null type, count 0", 0, 0, typeNull, procNull, 1, self, errSuccess},
		{"null buffer, count 0", 0, 0, mpiByte, procNull, 1, self, errSuccess},
		{"comm null", buf, 8, mpiByte, 0, 1, commNull, errComm},
		{"not a comm", buf, 8, mpiByte, 0, 1, 0x1234, errComm},
		{"type null", buf, 8, typeNull, 0, 1, self, errType},
		{"not a type", buf, 8, 0x2ff, 0, 1, self, errType},
		// no Go element type: the checked path moves it as bytes
		{"long double", addr(&longDoubleBuf[0]), 2, 0x220, 0, 1, self, errSuccess},
		{"negative count", buf, -1, mpiByte, 0, 1, self, errCount},
		{"null buffer", 0, 8, mpiByte, 0, 1, self, errBuffer},
		{"in place", inPlace, 8, mpiByte, 0, 1, self, errBuffer},
		{"rank", buf, 8, mpiByte, 5, 1, self, errRank},
		{"negative rank", buf, 8, mpiByte, -7, 1, self, errRank},
		{"negative tag", buf, 8, mpiByte, 0, -5, self, errTag},
	}
	for _, c := range cases {
		for _, call := range []struct {
			name string
			do   func() int
		}{
			{"MPI_Send", func() int {
				rc := mpiabi_Send(c.buf, c.n, c.dt, c.peer, c.tag, c.comm)
				if rc == errSuccess && c.peer == 0 {
					// take the message back: a later receive on self must not find it
					return int(mpiabi_Recv(c.buf, c.n, c.dt, 0, c.tag, c.comm, addr(&benchStatus)))
				}
				return int(rc)
			}},
			{"MPI_Recv", func() int {
				if c.class == errSuccess && c.peer == 0 {
					// a receive to self needs its message
					if rc := mpiabi_Send(c.buf, c.n, c.dt, 0, c.tag, c.comm); rc != errSuccess {
						return int(rc)
					}
				}
				return int(mpiabi_Recv(c.buf, c.n, c.dt, c.peer, c.tag, c.comm, addr(&benchStatus)))
			}},
		} {
			t.Run(call.name+"/"+c.name, func(t *testing.T) {
				rc := call.do()
				got := int32(errSuccess)
				if rc != errSuccess {
					if cr := mpiabi_Error_class(int32(rc), addr(&errClass)); cr != errSuccess {
						t.Fatalf("MPI_Error_class(%d): %d", rc, cr)
					}
					got = errClass
				}
				if got != c.class {
					t.Errorf("class %d, want %d", got, c.class)
				}
			})
		}
	}
}

// MPI_Send and MPI_Recv of a predefined type allocate nothing the Go
// API's Send and Recv do not.
func TestP2PFastPathAllocs(t *testing.T) {
	startSelf(t)
	rounds := p2pRounds(t)
	allocs := map[string]float64{}
	for _, r := range rounds {
		allocs[r.name] = testing.AllocsPerRun(200, func() {
			if err := r.round(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("allocations per round: %v", allocs)
	slack := 0.0
	if raceEnabled {
		slack = 1
	}
	for _, k := range []string{"abi/send-recv", "abi/send-recv-status"} {
		if allocs[k] > allocs["go/send-recv"]+slack {
			t.Errorf("%s: %.1f allocations per round, the Go API's %.1f", k, allocs[k], allocs["go/send-recv"])
		}
	}
}

// BenchmarkLockedThread is why a C rank's waits cost more than a Go
// rank's: every call of the binding runs on a goroutine locked to the C
// thread (a cgo callback's), and the runtime hands such a goroutine's
// processor over only by switching threads, so a yield (runtime.Gosched,
// which the peer package's SpinPoll does every 200 µs of waiting) and a
// park and wake-up (a wait past SpinPoll's budget) each cost thread
// wake-ups where an unlocked goroutine's cost none.
//
//	go test -run '^$' -bench LockedThread -benchtime 20000x ./abi
func BenchmarkLockedThread(b *testing.B) {
	for _, locked := range []bool{false, true} {
		name := "unlocked"
		if locked {
			name = "locked"
		}
		b.Run("gosched/"+name, func(b *testing.B) {
			if locked {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for b.Loop() {
				runtime.Gosched()
			}
		})
		b.Run("park-wake/"+name, func(b *testing.B) {
			ping, pong := make(chan struct{}), make(chan struct{})
			go func() {
				for range ping {
					pong <- struct{}{}
				}
			}()
			defer close(ping)
			if locked {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			for b.Loop() {
				ping <- struct{}{}
				<-pong
			}
		})
	}
}
