// Command wazerocompile compiles a wasip1 module into a wazero
// compilation cache, as meshrun does before a WASI job (host.Compile),
// and exits: cmd/meshrun's tests run it, built without the race
// detector, to fill the cache that meshrun, running in a race-enabled
// test process, then loads instead of compiling ten times slower.
//
//	wazerocompile module.wasm cachedir
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/meshmpi/meshmpi/wasm/host"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: wazerocompile module.wasm cachedir")
		os.Exit(2)
	}
	module, err := os.ReadFile(os.Args[1])
	if err == nil {
		var p *host.Program
		p, err = host.Compile(context.Background(), module, os.Args[2])
		if err == nil {
			err = p.Close(context.Background())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wazerocompile:", err)
		os.Exit(1)
	}
}
