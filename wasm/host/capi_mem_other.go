//go:build cgo && !unix && !js && !wasip1

package host

import "github.com/tetratelabs/wazero/experimental"

// reservingAllocator is wazero's own allocator where memory cannot be
// reserved by mmap; RunC's callers there must not grow a guest's memory
// while a nonblocking operation is pending.
func reservingAllocator() experimental.MemoryAllocator { return nil }
