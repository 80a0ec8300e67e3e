//go:build cgo

package abi

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
)

// What serving a WASI guest's calls costs over the native binding's: osu's
// bandwidth window (Irecv × w, Isend × w, one Waitall) on MPI_COMM_SELF,
// its buffers and requests in a guest memory of the test's, made through
// the WASICall table as wazero makes it ("wasi") and through the mpiabi_
// functions a native program's calls reach ("abi") on the same memory.
// Both move the messages in place (the singleton world's memory path
// copies each once, send buffer to receive buffer); what "wasi" costs
// over "abi" is the translation of the guest's values.
//
//	go test -run '^$' -bench WASIWindow -benchmem -count 6 ./abi

// wasiWindow is one window's calls on a guest memory.
type wasiWindow struct {
	g        *WASIGuest
	mem      []byte
	w, size  int
	reqs     uint32 // the guest's MPI_Request[2w]
	sbuf     uint32 // w messages of size bytes, then as many to receive
	rbuf     uint32
	isend    *WASICall
	irecv    *WASICall
	waitall  *WASICall
	args     [7]uint64
	hostReqs []uintptr // the abi round's requests
}

func newWASIWindow(tb testing.TB, w, size int) *wasiWindow {
	tb.Helper()
	x := &wasiWindow{w: w, size: size, reqs: 64, sbuf: 4096}
	x.rbuf = x.sbuf + uint32(w*size)
	x.mem = make([]byte, int(x.rbuf)+w*size)
	for i := range w * size {
		x.mem[int(x.sbuf)+i] = byte(i % 251)
	}
	x.g = &WASIGuest{Memory: func() []byte { return x.mem }}
	x.hostReqs = make([]uintptr, 2*w)
	for i := range WASICalls() {
		switch c := &WASICalls()[i]; c.Name {
		case "MPI_Isend":
			x.isend = c
		case "MPI_Irecv":
			x.irecv = c
		case "MPI_Waitall":
			x.waitall = c
		}
	}
	if x.isend == nil || x.irecv == nil || x.waitall == nil {
		tb.Fatal("no MPI_Isend, MPI_Irecv or MPI_Waitall among the WASI calls")
	}
	return x
}

// wasi makes the window's calls as the guest does.
func (x *wasiWindow) wasi() error {
	s := x.args[:]
	for i := range x.w {
		s[0], s[1], s[2], s[3], s[4], s[5], s[6] = uint64(x.rbuf)+uint64(i*x.size), uint64(x.size), mpiByte, 0, 2, uint64(self), uint64(x.reqs)+uint64(4*i)
		if x.irecv.Call(x.g, s); s[0] != errSuccess {
			return fmt.Errorf("MPI_Irecv: %d", int32(s[0]))
		}
	}
	for i := range x.w {
		s[0], s[1], s[2], s[3], s[4], s[5], s[6] = uint64(x.sbuf)+uint64(i*x.size), uint64(x.size), mpiByte, 0, 2, uint64(self), uint64(x.reqs)+uint64(4*(x.w+i))
		if x.isend.Call(x.g, s); s[0] != errSuccess {
			return fmt.Errorf("MPI_Isend: %d", int32(s[0]))
		}
	}
	s[0], s[1], s[2] = uint64(2*x.w), uint64(x.reqs), 0
	if x.waitall.Call(x.g, s); s[0] != errSuccess {
		return fmt.Errorf("MPI_Waitall: %d", int32(s[0]))
	}
	return nil
}

// abi makes the same calls on the same memory through the mpiabi_
// functions, as a native program's calls reach them.
func (x *wasiWindow) abi() error {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(x.mem)))
	for i := range x.w {
		if rc := mpiabi_Irecv(base+uintptr(x.rbuf)+uintptr(i*x.size), int32(x.size), mpiByte, 0, 2, self, addr(&x.hostReqs[i])); rc != errSuccess {
			return fmt.Errorf("MPI_Irecv: %d", rc)
		}
	}
	for i := range x.w {
		if rc := mpiabi_Isend(base+uintptr(x.sbuf)+uintptr(i*x.size), int32(x.size), mpiByte, 0, 2, self, addr(&x.hostReqs[x.w+i])); rc != errSuccess {
			return fmt.Errorf("MPI_Isend: %d", rc)
		}
	}
	if rc := mpiabi_Waitall(int32(2*x.w), addr(&x.hostReqs[0]), 0); rc != errSuccess {
		return fmt.Errorf("MPI_Waitall: %d", rc)
	}
	return nil
}

// check reports whether the window's messages arrived and its requests
// were freed (MPI_REQUEST_NULL in the guest's array).
func (x *wasiWindow) check() error {
	n := x.w * x.size
	if !bytes.Equal(x.mem[x.rbuf:int(x.rbuf)+n], x.mem[x.sbuf:int(x.sbuf)+n]) {
		return fmt.Errorf("the %d-byte messages did not arrive", x.size)
	}
	for i := range 2 * x.w {
		off := int(x.reqs) + 4*i
		if h := uint32(x.mem[off]) | uint32(x.mem[off+1])<<8 | uint32(x.mem[off+2])<<16 | uint32(x.mem[off+3])<<24; uintptr(h) != reqNull {
			return fmt.Errorf("request %d is %#x after MPI_Waitall", i, h)
		}
	}
	return nil
}

var wasiWindowSizes = []struct {
	name    string
	w, size int
}{{"8B", 16, 8}, {"64KiB", 16, 64 << 10}, {"1MiB", 4, 1 << 20}}

func BenchmarkWASIWindow(b *testing.B) {
	startSelf(b)
	for _, sz := range wasiWindowSizes {
		x := newWASIWindow(b, sz.w, sz.size)
		for _, way := range []struct {
			name  string
			round func() error
		}{{"wasi", x.wasi}, {"abi", x.abi}} {
			b.Run(sz.name+"/"+way.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(sz.w * sz.size))
				for b.Loop() {
					if err := way.round(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestWASIWindow: a guest's window of nonblocking calls delivers its
// messages in place and frees its requests, and serving it allocates
// nothing the native binding's calls do not.
func TestWASIWindow(t *testing.T) {
	startSelf(t)
	for _, sz := range wasiWindowSizes {
		t.Run(sz.name, func(t *testing.T) {
			x := newWASIWindow(t, sz.w, sz.size)
			if err := x.wasi(); err != nil {
				t.Fatal(err)
			}
			if err := x.check(); err != nil {
				t.Fatal(err)
			}
			if err := x.abi(); err != nil { // warms its requests' table too
				t.Fatal(err)
			}
			var failed error
			run := func(round func() error) func() {
				return func() {
					if err := round(); err != nil && failed == nil {
						failed = err
					}
				}
			}
			wasi := testing.AllocsPerRun(20, run(x.wasi))
			native := testing.AllocsPerRun(20, run(x.abi))
			if failed != nil {
				t.Fatal(failed)
			}
			if wasi > native {
				t.Errorf("a window of %d calls allocates %v times served for a guest, %v natively", 2*sz.w+1, wasi, native)
			}
		})
	}
}
