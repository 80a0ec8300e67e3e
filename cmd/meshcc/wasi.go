package main

import (
	"fmt"
	"io"
	"os"
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

// slotSource is linked first into every WASI rank. Its function takes
// index 1 of the rank's function table: a function pointer of wasm32 is
// an index into that table, where wasm-ld puts the first function whose
// address is taken at 1, which is also the standard ABI's
// MPI_COMM_DUP_FN (and MPI_TYPE_DUP_FN, MPI_DUP_FN); with this function
// there, a program's own copy function is never taken for
// MPI_*_DUP_FN (lld 14 has no --table-base). Its constructor makes
// stdout line-buffered: a fatal MPI error or MPI_Abort ends the host
// process at once, and the binding can flush a native program's stdio
// but not the guest's, whose last lines would be lost.
const slotSource = `/* meshcc: linked first into a WASI rank */
#include <stdio.h>
static void mpi_abi_table_slot1(void) {}
__attribute__((used)) void (*const mpi_abi_table_slot1_ref)(void) = mpi_abi_table_slot1;
__attribute__((constructor)) static void mpi_abi_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, BUFSIZ); }
`

// slotFile is the file name meshcc writes slotSource to.
const slotFile = "meshcc_table_slot.c"

// wasiCommand is the compiler command of a WASI rank: mpi.h's include
// path and, when it links, slot (slotSource's file) first, the stack, and
// the exports the host calls (malloc, free).
func wasiCommand(root string, args []string, link bool, slot string) []string {
	cmd := append(append([]string{}, wasiCompiler()...), "--target="+wasiTarget, "-I"+filepath.Join(root, "abi", "include"))
	if link {
		cmd = append(cmd, slot)
	}
	cmd = append(cmd, args...)
	if link {
		cmd = append(cmd, wasiStack, "-Wl,--export=malloc", "-Wl,--export=free")
	}
	return cmd
}

// runWASI compiles (and links) a WASI rank; no library is needed: the
// module imports the MPI calls from its host.
func runWASI(root string, args []string, link, show bool, stdout, stderr io.Writer) int {
	if show {
		fmt.Fprintln(stdout, quote(wasiCommand(root, args, link, filepath.Join("$TMPDIR", slotFile))))
		return 0
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "meshcc: no input files (meshcc --target wasm32-wasi [compiler arguments...])")
		return 2
	}
	dir, err := os.MkdirTemp("", "meshcc-")
	if err != nil {
		fmt.Fprintln(stderr, "meshcc:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	slot := filepath.Join(dir, slotFile)
	if err := os.WriteFile(slot, []byte(slotSource), 0o644); err != nil {
		fmt.Fprintln(stderr, "meshcc:", err)
		return 2
	}
	cmd := wasiCommand(root, args, link, slot)
	return runCompiler(cmd, stdout, stderr, " (WASI ranks need clang, lld and wasi-libc: apt-get install clang lld wasi-libc libclang-rt-dev-wasm32)")
}
