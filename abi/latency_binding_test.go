//go:build cgo

package abi

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// envOSUBinding makes TestOSUBindingRank a rank: TestOSULatency's
// "Go-ABI" pair sets it.
const envOSUBinding = "MESHMPI_OSU_BINDING"

// osuBindingBuf is TestOSUBindingRank's message buffer.
var osuBindingBuf [8]byte

// TestOSUBindingRank is the "Go-ABI" pair's rank of TestOSULatency:
// osu.c's latency loop through the binding's exports (mpiabi_Send,
// mpiabi_Recv on MPI_COMM_WORLD) called from Go, so without the cgo
// crossing. Against the Go pair it shows what the binding costs a
// message, against the C pair what the crossing from C into Go does.
func TestOSUBindingRank(t *testing.T) {
	s := os.Getenv(envOSUBinding)
	if s == "" {
		t.Skip("a rank of TestOSULatency's Go-ABI pair, started by meshrun")
	}
	scale, err := strconv.ParseFloat(s, 64)
	if err != nil || scale <= 0 {
		scale = 1
	}
	if rc := mpiabi_Init(0, 0); rc != errSuccess {
		t.Fatalf("MPI_Init: %d", rc)
	}
	const world = 0x101 // MPI_COMM_WORLD
	var rank int32
	if rc := mpiabi_Comm_rank(world, addr(&rank)); rc != errSuccess {
		t.Fatalf("MPI_Comm_rank: %d", rc)
	}
	iters := int(10000*scale) + 10
	// the buffer stands for C memory: it must not move, as a goroutine's
	// stack does when it grows, so it is not a local
	small := &osuBindingBuf
	buf := addr(&small[0])
	var t0 time.Time
	for i := -10; i < iters; i++ {
		if i == 0 {
			t0 = time.Now()
		}
		switch rank {
		case 0:
			small[0] = byte(i)
			if rc := mpiabi_Send(buf, 8, mpiByte, 1, 1, world); rc != errSuccess {
				t.Fatalf("MPI_Send: %d", rc)
			}
			if rc := mpiabi_Recv(buf, 8, mpiByte, 1, 1, world, 0); rc != errSuccess {
				t.Fatalf("MPI_Recv: %d", rc)
			}
			if small[0] != byte(i+1) {
				t.Fatalf("latency: wrong reply %d at %d", small[0], i)
			}
		case 1:
			if rc := mpiabi_Recv(buf, 8, mpiByte, 0, 1, world, 0); rc != errSuccess {
				t.Fatalf("MPI_Recv: %d", rc)
			}
			small[0]++
			if rc := mpiabi_Send(buf, 8, mpiByte, 0, 1, world); rc != errSuccess {
				t.Fatalf("MPI_Send: %d", rc)
			}
		}
	}
	lat := time.Since(t0).Seconds() / float64(iters) / 2 * 1e6
	if rank == 0 {
		fmt.Printf("osu: latency 8 B: %.2f us\nosu ok\n", lat)
	}
	if rc := mpiabi_Finalize(); rc != errSuccess {
		t.Fatalf("MPI_Finalize: %d", rc)
	}
}
