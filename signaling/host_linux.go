//go:build linux

package signaling

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync"
)

// LocalHost is this process's host identity (Join.Host): a hash of the
// kernel's boot id, the user id and the network namespace, so two
// processes get the same one only when they share a running kernel, a
// user and the abstract unix sockets a same-host link rendezvouses on.
// The raw boot id never leaves the process. "" if the boot id cannot be
// read.
var LocalHost = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	// a missing namespace link (old kernels) leaves it out: the boot id
	// and uid still tell machines and users apart
	ns, _ := os.Readlink("/proc/self/ns/net")
	h := sha256.New()
	for _, s := range []string{"meshmpi host v1", strings.TrimSpace(string(boot)), strconv.Itoa(os.Getuid()), ns} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "h1:" + hex.EncodeToString(h.Sum(nil)[:16])
})
