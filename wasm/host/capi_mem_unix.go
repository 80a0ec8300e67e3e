//go:build cgo && unix && !js && !wasip1

package host

import (
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

// reservingAllocator makes a C guest's linear memory as a reservation of
// its whole maximum (4 GiB for a module without one) that it never leaves:
// address space, not memory, until the guest grows into it. The backing
// never moves, so a buffer that a pending nonblocking operation holds
// stays where the operation reads or writes it.
func reservingAllocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
		b, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
		if err != nil {
			return nil
		}
		return &reserved{all: b}
	})
}

// reserved is a linear memory inside its reservation: the first size
// bytes are readable and writable.
type reserved struct {
	all  []byte
	size uint64
}

func (m *reserved) Reallocate(size uint64) []byte {
	if size > uint64(len(m.all)) {
		return nil
	}
	if size > m.size {
		if err := syscall.Mprotect(m.all[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return unsafe.Slice(unsafe.SliceData(m.all), size)[:size:size]
}

func (m *reserved) Free() {
	if m.all != nil {
		syscall.Munmap(m.all)
		m.all = nil
	}
}
