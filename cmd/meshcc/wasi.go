package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// wasiTarget is the clang target of a WASI rank.
const wasiTarget = "wasm32-wasi"

// isWASI reports whether a --target names WASI on wasm32 (wasm32-wasi,
// wasm32-wasip1, wasm32-unknown-wasi).
func isWASI(t string) bool { return strings.HasPrefix(t, "wasm32") && strings.Contains(t, "wasi") }

// wasiCompiler is the C compiler of WASI ranks: $MESHCC_WASI_CC, or clang.
func wasiCompiler() []string {
	if f := strings.Fields(os.Getenv("MESHCC_WASI_CC")); len(f) > 0 {
		return f
	}
	return []string{"clang"}
}

// wasiStack is a WASI rank's stack: 8 MiB as a native process's, not
// wasm-ld's 64 KiB, which arrays on the stack that a native program
// holds overflow (abi/testdata/mixed.c's two 10000-double buffers trap
// with an out-of-bounds access).
const wasiStack = "-Wl,-z,stack-size=8388608"

// wasiCommand is the compiler command of a WASI rank: mpi.h's include
// path and, when it links, its stack and the exports the host calls
// (malloc, free).
func wasiCommand(root string, args []string, link bool) []string {
	cmd := append(append([]string{}, wasiCompiler()...), "--target="+wasiTarget, "-I"+filepath.Join(root, "abi", "include"))
	cmd = append(cmd, args...)
	if link {
		cmd = append(cmd, wasiStack, "-Wl,--export=malloc", "-Wl,--export=free")
	}
	return cmd
}

// runWASI compiles (and links) a WASI rank; no library is needed: the
// module imports the MPI calls from its host.
func runWASI(root string, args []string, link, show bool, stdout, stderr io.Writer) int {
	cmd := wasiCommand(root, args, link)
	if show {
		fmt.Fprintln(stdout, quote(cmd))
		return 0
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "meshcc: no input files (meshcc --target wasm32-wasi [compiler arguments...])")
		return 2
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "meshcc: %v (WASI ranks need clang, lld and wasi-libc: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32)\n", err)
		return 2
	}
	return 0
}
