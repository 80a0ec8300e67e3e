//go:build cgo

package abi

import (
	"testing"
)

// Buffers of TestShortMessageKeepsRest: globals, since a nonblocking
// receive holds their address and a goroutine's stack may move.
var (
	shortSend          [2]int32
	shortRecv          [8]int32
	shortReq, shortMsg uint64
)

// A derived-type receive that gets a shorter message than its buffer
// holds changes only the elements the message fills (MPI-4.1 §3.2.4):
// every receive form, the type a vector with gaps (4 ints, stride 2), so
// that the binding stages it through a packed copy where it does. Mrecv,
// Imrecv and Isendrecv unpacked their whole copy: the rest of the buffer
// took the copy's uninitialized bytes.
func TestShortMessageKeepsRest(t *testing.T) {
	startSelf(t)
	rc0(t, "MPI_Type_vector", int32(mpiabi_Type_vector(4, 1, 2, mpiInt, outAddr(20))))
	rc0(t, "MPI_Type_commit", int32(mpiabi_Type_commit(outAddr(20))))
	vec := uintptr(sweepOut[20])
	defer mpiabi_Type_free(outAddr(20))
	const tag = 91
	send := func(t *testing.T) {
		rc0(t, "MPI_Send", int32(mpiabi_Send(addr(&shortSend[0]), 2, mpiInt, 0, tag, self)))
	}
	wait := func(t *testing.T) {
		rc0(t, "MPI_Wait", int32(mpiabi_Wait(addr(&shortReq), 0)))
	}
	forms := []struct {
		name string
		recv func(t *testing.T)
	}{
		{"Recv", func(t *testing.T) {
			send(t)
			rc0(t, "MPI_Recv", int32(mpiabi_Recv(addr(&shortRecv[0]), 1, vec, 0, tag, self, 0)))
		}},
		{"Irecv", func(t *testing.T) {
			rc0(t, "MPI_Irecv", int32(mpiabi_Irecv(addr(&shortRecv[0]), 1, vec, 0, tag, self, addr(&shortReq))))
			send(t)
			wait(t)
		}},
		{"Mrecv", func(t *testing.T) {
			send(t)
			rc0(t, "MPI_Mprobe", int32(mpiabi_Mprobe(0, tag, self, addr(&shortMsg), 0)))
			rc0(t, "MPI_Mrecv", int32(mpiabi_Mrecv(addr(&shortRecv[0]), 1, vec, addr(&shortMsg), 0)))
		}},
		{"Imrecv", func(t *testing.T) {
			send(t)
			rc0(t, "MPI_Mprobe", int32(mpiabi_Mprobe(0, tag, self, addr(&shortMsg), 0)))
			rc0(t, "MPI_Imrecv", int32(mpiabi_Imrecv(addr(&shortRecv[0]), 1, vec, addr(&shortMsg), addr(&shortReq))))
			wait(t)
		}},
		{"Sendrecv", func(t *testing.T) {
			rc0(t, "MPI_Sendrecv", int32(mpiabi_Sendrecv(addr(&shortSend[0]), 2, mpiInt, 0, tag,
				addr(&shortRecv[0]), 1, vec, 0, tag, self, 0)))
		}},
		{"Isendrecv", func(t *testing.T) {
			rc0(t, "MPI_Isendrecv", int32(mpiabi_Isendrecv(addr(&shortSend[0]), 2, mpiInt, 0, tag,
				addr(&shortRecv[0]), 1, vec, 0, tag, self, addr(&shortReq))))
			wait(t)
		}},
	}
	for i, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			shortSend = [2]int32{int32(100 + i), int32(200 + i)}
			for j := range shortRecv {
				shortRecv[j] = int32(-1 - j)
			}
			f.recv(t)
			want := [8]int32{shortSend[0], -2, shortSend[1], -4, -5, -6, -7, -8}
			if shortRecv != want {
				t.Fatalf("buffer %v after a 2-int message into a 4-int vector, want %v", shortRecv, want)
			}
		})
	}
}
