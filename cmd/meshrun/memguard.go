//go:build unix || windows

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Memory a rank takes, measured on linux/amd64 (Go 1.25, 24 GB host) with
// a program that links to every other rank (an Alltoall) and then blocks
// in Recv; the resident set size of meshrun and of its rank processes,
// from /proc/PID/status VmRSS:
//
//	native rank process, -n 1, no links:       12 MB
//	native rank process, -n 8, all linked:     19 MB each (155 MB)
//	native rank process, -n 16, all linked:    24 MB each (380 MB)
//	meshrun itself, native ranks only:         19–22 MB
//	meshrun with WASI ranks (wazero), -n 4:   113 MB
//	meshrun with WASI ranks (wazero), -n 8:   183 MB
//	meshrun with WASI ranks (wazero), -n 16:  397 MB, 27 MB more a rank
//
// A WASI rank is a guest in meshrun's shared wazero runtime: its linear
// memory and the host's pion peer connections for it. Links are lazy,
// so a large job's ranks hold fewer than a 16-rank all-to-all's; the
// guard's figures below are that of a well-linked rank, rounded down:
// it is there to refuse a job that cannot fit (meshrun -n 5000), not to
// account for every megabyte.
const (
	nativeRankMem = 20 << 20  // one native rank process
	wasiRankMem   = 25 << 20  // one WASI guest inside meshrun
	wasiHostMem   = 100 << 20 // meshrun's compiled module and runtime, once, with WASI ranks
)

// memAvailable is how much memory the host has for new processes
// (availableMemory); ok is false where meshrun cannot tell, and the
// guard is skipped. Tests replace it.
var memAvailable = availableMemory

// jobMemory estimates the memory of n ranks of which nwasi run under
// WASI, in bytes, and says how in words.
func jobMemory(n, nwasi int) (uint64, string) {
	var parts []string
	var total uint64
	if native := n - nwasi; native > 0 {
		total += uint64(native) * nativeRankMem
		parts = append(parts, fmt.Sprintf("%d native rank(s) × %s", native, bytesIEC(nativeRankMem)))
	}
	if nwasi > 0 {
		total += uint64(nwasi)*wasiRankMem + wasiHostMem
		parts = append(parts, fmt.Sprintf("%d WASI rank(s) × %s + %s for the WASI runtime", nwasi, bytesIEC(wasiRankMem), bytesIEC(wasiHostMem)))
	}
	return total, strings.Join(parts, " + ")
}

// checkMemory refuses a job whose estimated memory exceeds the host's
// available memory (--mem-check, on by default).
func checkMemory(n, nwasi int) error {
	avail, ok := memAvailable()
	if !ok {
		return nil
	}
	need, how := jobMemory(n, nwasi)
	if need <= avail {
		return nil
	}
	return fmt.Errorf("-n %d: the job needs about %s (%s), more than the %s this host has available: run fewer ranks, or --mem-check=false to start it anyway",
		n, bytesIEC(need), how, bytesIEC(avail))
}

// bytesIEC writes b in MiB or GiB.
func bytesIEC(b uint64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// parseMemAvailable reads "MemAvailable:   23668016 kB" out of meminfo.
func parseMemAvailable(meminfo []byte) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 || string(f[0]) != "MemAvailable:" {
			continue
		}
		kb, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}
