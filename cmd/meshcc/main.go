// Meshcc compiles and links C programs against meshmpi's MPI standard ABI:
// it is meshmpi's mpicc.
//
//	meshcc [-show] [-lib] [compiler arguments...]
//
// For example, from the repository's root,
//
//	go run ./cmd/meshcc -O2 -o pi examples/c/pi.c
//	go run ./cmd/meshrun -n 4 ./pi
//
// compiles examples/c/pi.c with the C compiler, adding the include path of
// abi/include (meshmpi's mpi.h) and linking libmpi_abi.so with an rpath to
// its directory, so ./pi runs without LD_LIBRARY_PATH; meshrun then runs
// it as 4 native ranks of one job. The compiler is $MESHCC_CC, else $CC,
// else cc. With -c, -E, -S or -M (no linking) only the include path is
// added.
//
// libmpi_abi.so is built on demand (go build -buildmode=c-shared
// ./abi/lib) into the user's cache directory (os.UserCacheDir, under
// meshmpi/abi/KEY), KEY a hash of the Go version and the sources it is
// built from, so a changed binding builds a new library and an unchanged
// one is reused at once. $MESHCC_CACHE replaces the cache directory. The meshmpi module is found with go list -m
// (the module of the working directory, or one it requires), or
// $MESHCC_ROOT.
//
// With --target wasm32-wasi (or --target=wasm32-wasi, -target …) meshcc
// compiles a WASI rank instead: $MESHCC_WASI_CC (default clang; Debian's
// clang, lld and wasi-libc, packages clang lld wasi-libc
// libclang-rt-dev-wasm32) with --target=wasm32-wasi, the same mpi.h, and
// no library: the module imports every MPI call from module "mpi_abi",
// which the WASI host (meshrun, package wasm/host) provides from a rank
// running natively beside it. The module exports malloc and free, through
// which the host gives the guest MPI_Alloc_mem's memory and the values of
// the predefined attributes, and its function table's index 1 is taken by
// a function of meshcc's (linked first), so that none of the program's
// functions is MPI_COMM_DUP_FN's value, 1:
//
//	go run ./cmd/meshcc --target wasm32-wasi -O2 -o pi.wasm examples/c/pi.c
//	go run ./cmd/meshrun -n 4 pi.wasm
//
// -show prints the compiler command, one shell-quoted line, without
// building or running anything; -lib builds the library if needed and
// prints its path. Exit status: the compiler's, or 2 for meshcc's own
// errors (no meshmpi module, a failed library build).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

const module = "github.com/meshmpi/meshmpi"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	show, lib, wasi := false, false, false
	var rest []string
	link := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-show" || a == "--show":
			show = true
			continue
		case a == "-lib" || a == "--lib":
			lib = true
			continue
		case (a == "--target" || a == "-target") && i+1 < len(args):
			i++
			if wasi = isWASI(args[i]); !wasi {
				rest = append(rest, "--target="+args[i])
			}
			continue
		case strings.HasPrefix(a, "--target=") || strings.HasPrefix(a, "-target="):
			_, t, _ := strings.Cut(a, "=")
			if wasi = isWASI(t); !wasi {
				rest = append(rest, a)
			}
			continue
		case a == "-c" || a == "-E" || a == "-S" || a == "-M" || a == "-MM":
			link = false
		}
		rest = append(rest, a)
	}
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(stderr, "meshcc:", err)
		return 2
	}
	if wasi {
		return runWASI(root, rest, link && !lib, show, stdout, stderr)
	}
	dir, err := libDir(root)
	if err != nil {
		fmt.Fprintln(stderr, "meshcc:", err)
		return 2
	}
	cc := compiler()
	cmd := append(append([]string{}, cc...), "-I"+filepath.Join(root, "abi", "include"))
	cmd = append(cmd, rest...)
	if link && !lib {
		cmd = append(cmd, "-L"+dir, "-lmpi_abi", "-Wl,-rpath,"+dir)
	}
	if show {
		fmt.Fprintln(stdout, quote(cmd))
		return 0
	}
	so := filepath.Join(dir, "libmpi_abi.so")
	if link || lib {
		if err := build(root, dir, stderr); err != nil {
			fmt.Fprintln(stderr, "meshcc:", err)
			return 2
		}
	}
	if lib {
		fmt.Fprintln(stdout, so)
		if len(rest) == 0 {
			return 0
		}
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "meshcc: no input files (meshcc [-show] [-lib] [compiler arguments...])")
		return 2
	}
	return runCompiler(cmd, stdout, stderr, "")
}

// runCompiler runs cmd with meshcc's standard streams and returns the
// exit status meshcc gives: the compiler's own, or 2 when it could not
// start (with hint after the error, if any).
func runCompiler(cmd []string, stdout, stderr io.Writer, hint string) int {
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, stdout, stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(stderr, "meshcc: %v%s\n", err, hint)
		return 2
	}
	return 0
}

// compiler is the C compiler's command: $MESHCC_CC, $CC or cc.
func compiler() []string {
	for _, k := range []string{"MESHCC_CC", "CC"} {
		if f := strings.Fields(os.Getenv(k)); len(f) > 0 {
			return f
		}
	}
	return []string{"cc"}
}

// moduleRoot is the meshmpi module's directory.
func moduleRoot() (string, error) {
	if r := os.Getenv("MESHCC_ROOT"); r != "" {
		return r, nil
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			return d, nil
		}
	}
	return "", fmt.Errorf("cannot find the %s module (go list -m %s: %v); run meshcc in a module that requires it, or set MESHCC_ROOT", module, module, err)
}

// libDir is the cache directory of the library built from the module's
// current sources.
func libDir(root string) (string, error) {
	key, err := sourceKey(root)
	if err != nil {
		return "", err
	}
	cache := os.Getenv("MESHCC_CACHE")
	if cache == "" {
		if cache, err = os.UserCacheDir(); err != nil {
			return "", fmt.Errorf("no cache directory for libmpi_abi.so: %w", err)
		}
	}
	return filepath.Join(cache, "meshmpi", "abi", key), nil
}

// sourceKey hashes the Go version, go.mod, go.sum and every source file
// of the module's packages that ./abi/lib is built from.
func sourceKey(root string) (string, error) {
	c := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./abi/lib")
	c.Dir = root
	var errb bytes.Buffer
	c.Stderr = &errb
	out, err := c.Output()
	if err != nil {
		return "", fmt.Errorf("go list -deps ./abi/lib in %s: %v: %s", root, err, strings.TrimSpace(errb.String()))
	}
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	files := []string{filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum")}
	for _, d := range strings.Fields(string(out)) {
		if !strings.HasPrefix(d, root) {
			continue // a module dependency: go.sum pins it
		}
		ents, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || strings.HasSuffix(n, "_test.go") {
				continue
			}
			switch filepath.Ext(n) {
			case ".go", ".c", ".h", ".s", ".txt":
				files = append(files, filepath.Join(d, n))
			}
		}
	}
	files = append(files, filepath.Join(root, "abi", "include", "mpi.h"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(f, root), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// build makes dir/libmpi_abi.so unless it is there.
func build(root, dir string, stderr io.Writer) error {
	so := filepath.Join(dir, "libmpi_abi.so")
	if _, err := os.Stat(so); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, "build")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(tmp, "libmpi_abi.so"), "./abi/lib")
	c.Dir = root
	c.Env = append(os.Environ(), "CGO_ENABLED=1")
	c.Stdout, c.Stderr = stderr, stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("building libmpi_abi.so: go build -buildmode=c-shared ./abi/lib: %w", err)
	}
	return os.Rename(filepath.Join(tmp, "libmpi_abi.so"), so)
}

// quote joins a command for a POSIX shell.
func quote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,+:@%", r))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
