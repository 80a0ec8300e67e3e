//go:build unix || windows

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/meshmpi/meshmpi/wasm/host"
)

// cRankCommand is meshrun's hidden command that runs one C rank's module
// under WASI (cRank): meshrun starts one process of itself per C WASI
// rank, as the C binding that serves the guest's MPI calls keeps one
// rank's state per process.
const cRankCommand = "__c-wasi-rank"

// cModuleName is the import module of a C rank's MPI calls (abi.WASIModule).
const cModuleName = "mpi_abi"

// prepareC turns a C target into what the launcher runs: a .c file is
// compiled with meshcc, natively for --native, else for wasm32-wasi; a
// module that imports the MPI calls from "mpi_abi" (a C rank, built by
// meshcc --target wasm32-wasi) runs as processes of meshrun's own
// cRankCommand, each hosting one guest under wazero. Any other target is
// left as it is. done removes what prepareC built.
func prepareC(cfg *config, stderr io.Writer) (done func(), err error) {
	done = func() {}
	src, module := strings.HasSuffix(cfg.target, ".c"), strings.HasSuffix(cfg.target, ".wasm")
	if !src && !module {
		return done, nil
	}
	if module {
		ok, err := isCModule(cfg.target)
		if err != nil || !ok {
			return done, nil // a Go module, or not a module: the launcher says
		}
	}
	switch {
	case cfg.wasi > 0:
		return done, fmt.Errorf("--wasi %d: a C program's ranks all run one way: under WASI (the default) or as native processes (--native)", cfg.wasi)
	case module && cfg.native:
		return done, fmt.Errorf("%s is a WebAssembly module: it runs under WASI, not --native (build the C program natively with meshcc)", cfg.target)
	case cfg.runtime == runtimeWasmtime:
		return done, errors.New("--runtime wasmtime: C ranks run under wazero only")
	}
	target := cfg.target
	if src {
		dir, err := os.MkdirTemp("", "meshrun-c-")
		if err != nil {
			return done, err
		}
		done = func() { os.RemoveAll(dir) }
		name := strings.TrimSuffix(filepath.Base(cfg.target), ".c")
		out := filepath.Join(dir, name)
		args := []string{"-O2", "-o", out, cfg.target, "-lm"}
		if !cfg.native {
			out += ".wasm"
			args = []string{"--target", "wasm32-wasi", "-O2", "-o", out, cfg.target, "-lm"}
		}
		if err := meshcc(args, stderr); err != nil {
			done()
			return func() {}, fmt.Errorf("%s: %w", cfg.target, err)
		}
		target = out
		if cfg.native {
			cfg.target = target
			return done, nil
		}
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		done()
		return func() {}, err
	}
	self, err := os.Executable()
	if err != nil {
		done()
		return func() {}, fmt.Errorf("C ranks run as processes of meshrun itself: %w", err)
	}
	cfg.target, cfg.args = self, append([]string{cRankCommand, abs}, cfg.args...)
	return done, nil
}

// meshcc runs meshmpi's mpicc: the meshcc beside meshrun's executable,
// else the one on PATH, else go run of the module's cmd/meshcc (meshrun
// run from within a module that has meshmpi).
func meshcc(args []string, stderr io.Writer) error {
	cmd := []string{"go", "run", "github.com/meshmpi/meshmpi/cmd/meshcc"}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "meshcc"); isFile(p) {
			cmd = []string{p}
		} else if p, err := exec.LookPath("meshcc"); err == nil {
			cmd = []string{p}
		}
	}
	c := exec.Command(cmd[0], append(cmd[1:], args...)...)
	c.Stdout, c.Stderr = stderr, stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("meshcc %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// isCModule reports whether the WebAssembly module at path imports the
// MPI calls: from "mpi_abi" (meshcc's mpi.h), or from "env" (another
// header of the standard ABI, linked with --allow-undefined): a C rank.
// It reads the import section only.
func isCModule(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	imps, err := importModules(b)
	if err != nil {
		return false, err
	}
	for _, im := range imps {
		if im.module == cModuleName || im.module == "env" && (strings.HasPrefix(im.name, "MPI_") || strings.HasPrefix(im.name, "PMPI_")) {
			return true, nil
		}
	}
	return false, nil
}

// wasmImport is one import of a module: its module's name and its own.
type wasmImport struct{ module, name string }

// errNotWasm is importModules' error for bytes that are not a module it
// can read.
var errNotWasm = errors.New("not a WebAssembly module")

// importModules lists a binary module's imports.
func importModules(b []byte) ([]wasmImport, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) {
		return nil, errNotWasm
	}
	r := &wasmReader{b: b[8:]}
	for len(r.b) > 0 && r.err == nil {
		id := r.byte()
		size := r.u32()
		if r.err != nil || uint64(size) > uint64(len(r.b)) {
			return nil, errNotWasm
		}
		sec := r.b[:size]
		r.b = r.b[size:]
		if id != 2 {
			continue
		}
		s := &wasmReader{b: sec}
		n := s.u32()
		var mods []wasmImport
		for i := uint32(0); i < n && s.err == nil; i++ {
			mods = append(mods, wasmImport{module: s.name(), name: s.name()})
			switch s.byte() {
			case 0: // function: its type
				s.u32()
			case 1: // table: its element type, limits
				s.byte()
				s.limits()
			case 2: // memory
				s.limits()
			case 3: // global: its type, mutability
				s.byte()
				s.byte()
			default:
				return nil, errNotWasm
			}
		}
		if s.err != nil {
			return nil, s.err
		}
		return mods, nil
	}
	return nil, r.err
}

// wasmReader reads the binary format's integers and names.
type wasmReader struct {
	b   []byte
	err error
}

func (r *wasmReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errNotWasm
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *wasmReader) u32() uint32 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<32-1 {
		r.err = errNotWasm
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return uint32(v)
}

func (r *wasmReader) name() string {
	n := r.u32()
	if uint64(n) > uint64(len(r.b)) {
		r.err = errNotWasm
		r.b = nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *wasmReader) limits() {
	if f := r.byte(); f&1 != 0 {
		r.u32()
		r.u32()
	} else {
		r.u32()
	}
}

// cRank is the process of one C WASI rank (cRankCommand MODULE ARGS…):
// it runs the module under wazero with its MPI calls served by the C
// binding, which joins the job meshrun put in the environment, and exits
// with the guest's status. The guest sees the working directory as /.
func cRank(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "meshrun %s: no module\n", cRankCommand)
		return exitUsage
	}
	module, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "meshrun: %v\n", err)
		return 1
	}
	name := strings.TrimSuffix(filepath.Base(args[0]), ".wasm")
	wd, _ := os.Getwd() // the guest's / ("" if there is none: no files)
	status, err := host.RunC(context.Background(), module, host.CRank{Name: name, Args: args[1:], Env: os.Environ(),
		Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Root: wd})
	if err != nil {
		fmt.Fprintf(stderr, "meshrun: C rank %s: %v\n", name, err)
		if status == 0 {
			status = 1
		}
	}
	return status
}
