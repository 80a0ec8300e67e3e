//go:build race && !js && !wasip1

package hosttest

import "github.com/meshmpi/meshmpi/wasm/internal/wazerowarm"

// Under the race detector the guest's first compile into a fresh cache
// is some ten times slower: Compile's cache is filled by a process
// without it (wazerowarm).
func init() {
	warmWazero = func(dir string) {
		if path, err := guest(); err == nil {
			wazerowarm.Warm(path, dir)
		}
	}
}
