//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
)

// meshccBinary is meshcc beside meshrunBinary, where meshrun looks for it
// to compile a .c target.
var meshccBinary = testbin.Once(gobuild.Go{}, "../meshcc", "meshcc")

// needWASIClang skips the test when clang cannot link a wasm32-wasi
// program, unless MESHMPI_C_WASI_TESTS=require (CI, which installs it:
// .ci/install-wasi-c) makes that a failure.
func needWASIClang(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("clang", "--target=wasm32-wasi", "-o", src+".wasm", src).CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("no clang for wasm32-wasi (bash .ci/install-wasi-c installs it): %v\n%s", err, out)
	if os.Getenv("MESHMPI_C_WASI_TESTS") == "require" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// cTools builds meshrun and meshcc side by side.
func cTools(t *testing.T) (meshrun, meshcc string) {
	t.Helper()
	meshrun, err := meshrunBinary()
	if err != nil {
		t.Fatal(err)
	}
	if meshcc, err = meshccBinary(); err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(meshrun) != filepath.Dir(meshcc) {
		t.Fatalf("meshrun %s and meshcc %s are not side by side", meshrun, meshcc)
	}
	return meshrun, meshcc
}

// TestCExamples runs the C examples (examples/c) with meshrun, from their
// source: as WASI ranks under wazero (the default) and as native
// processes (--native); the benchmark (osu.c) too, scaled down, for its
// own checks.
func TestCExamples(t *testing.T) {
	needWASIClang(t)
	meshrun, _ := cTools(t)
	want := map[string]string{
		"pi":        "with 4 ranks: ok",
		"ring":      "ring of 4 ranks, 10 laps: ok",
		"allreduce": "on 4 ranks: sum[0] = 6, sum[999] = 4002: ok",
		"heat":      "matches the sequential run: ok",
		"osu":       "osu ok", // the benchmark, scaled down to a check
	}
	for _, mode := range []string{"wasi", "native"} {
		for _, ex := range []string{"pi", "ring", "allreduce", "heat", "osu"} {
			t.Run(mode+"/"+ex, func(t *testing.T) {
				args := []string{"-n", "4", "--timeout", "2m"}
				if mode == "native" {
					args = append(args, "--native")
				}
				src, _ := filepath.Abs(filepath.Join("../../examples/c", ex+".c"))
				ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
				defer cancel()
				args = append(args, src)
				if ex == "osu" {
					args = append(args, "0.02")
				}
				out, err := exec.CommandContext(ctx, meshrun, args...).CombinedOutput()
				if err != nil || !strings.Contains(string(out), "[0] ") || !strings.Contains(string(out), want[ex]) {
					t.Fatalf("meshrun %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			})
		}
	}
}

// TestCModule runs a C rank's module that meshcc built: meshrun tells it
// from a Go module by its imports and runs it as C WASI ranks.
func TestCModule(t *testing.T) {
	needWASIClang(t)
	meshrun, meshcc := cTools(t)
	wasm := filepath.Join(t.TempDir(), "ring.wasm")
	if out, err := exec.Command(meshcc, "--target", "wasm32-wasi", "-O2", "-o", wasm, "../../examples/c/ring.c").CombinedOutput(); err != nil {
		t.Fatalf("meshcc: %v\n%s", err, out)
	}
	ok, err := isCModule(wasm)
	if err != nil || !ok {
		t.Fatalf("isCModule(ring.wasm) = %v, %v", ok, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, meshrun, "-n", "3", "--timeout", "2m", wasm).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[0] ring of 3 ranks, 10 laps: ok") {
		t.Fatalf("meshrun -n 3 ring.wasm: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, meshrun, "-n", "3", "--native", wasm).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "runs under WASI, not --native") {
		t.Errorf("meshrun --native ring.wasm: %v\n%s", err, out)
	}
}

// TestImportModules reads the import section of modules made by hand.
func TestImportModules(t *testing.T) {
	// module with one import: (import "mpi_abi" "MPI_Init" (func (type 0)))
	imports := func(mods ...string) []byte {
		var sec []byte
		sec = append(sec, byte(len(mods)))
		for _, m := range mods {
			sec = append(sec, byte(len(m)))
			sec = append(sec, m...)
			sec = append(sec, 1, 'f', 0, 0) // name "f", a function of type 0
		}
		b := []byte("\x00asm\x01\x00\x00\x00")
		b = append(b, 1, 4, 1, 0x60, 0, 0) // type section: () -> ()
		b = append(b, 2, byte(len(sec)))
		return append(b, sec...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want []string
		err  bool
	}{
		{"C rank", imports("wasi_snapshot_preview1", "mpi_abi"), []string{"wasi_snapshot_preview1.f", "mpi_abi.f"}, false},
		{"Go rank", imports("wasi_snapshot_preview1", "meshmpi"), []string{"wasi_snapshot_preview1.f", "meshmpi.f"}, false},
		{"no imports", []byte("\x00asm\x01\x00\x00\x00"), nil, false},
		{"not a module", []byte("#!/bin/sh\n"), nil, true},
		{"cut short", imports("mpi_abi")[:17], nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imps, err := importModules(tc.b)
			var got []string
			for _, im := range imps {
				got = append(got, im.module+"."+im.name)
			}
			if (err != nil) != tc.err || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("importModules = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestMixedCWASIAndGo runs C ranks under WASI (abi/testdata/mixed.c,
// each in a process of meshrun's cRankCommand, as meshrun starts them)
// and Go ranks (abi/testdata/gorank, native) in one job: a signaling
// server of the test's own, a seat token per rank, and the environment
// meshrun gives a rank.
func TestMixedCWASIAndGo(t *testing.T) {
	needWASIClang(t)
	meshrun, meshcc := cTools(t)
	dir := t.TempDir()
	wasm := filepath.Join(dir, "mixed.wasm")
	if out, err := exec.Command(meshcc, "--target", "wasm32-wasi", "-O2", "-o", wasm, "../../abi/testdata/mixed.c").CombinedOutput(); err != nil {
		t.Fatalf("meshcc: %v\n%s", err, out)
	}
	gorank := filepath.Join(dir, "gorank")
	if out, err := exec.Command("go", "build", "-o", gorank, "../../abi/testdata/gorank").CombinedOutput(); err != nil {
		t.Fatalf("go build gorank: %v\n%s", err, out)
	}
	const n = 4
	srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: n})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	job := "c-wasi-mixed"
	seats, err := srv.MintSeats(signaling.Claims{Job: job, Size: n, Expires: time.Now().Add(time.Hour).Unix(),
		Settings: map[string]string{meshmpi.SettingNetwork: "loopback"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type proc struct {
		cmd      *exec.Cmd
		out, err bytes.Buffer
	}
	procs := make([]*proc, n)
	for r := range n {
		p := &proc{cmd: exec.CommandContext(ctx, meshrun, cRankCommand, wasm)} // ranks 0 and 2: C under WASI
		if r%2 == 1 {
			p.cmd = exec.CommandContext(ctx, gorank) // 1 and 3: Go
		}
		p.cmd.Env = append(os.Environ(), meshmpi.EnvSignal+"="+srv.URL(), meshmpi.EnvJob+"="+job,
			meshmpi.EnvToken+"="+seats[r], meshmpi.EnvRank+"="+fmt.Sprint(r))
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[r] = p
	}
	for r, p := range procs {
		err := p.cmd.Wait()
		lang := map[bool]string{true: "C", false: "Go"}[r%2 == 0]
		want := fmt.Sprintf("mixed ok: %s rank %d of %d", lang, r, n)
		if err != nil || !strings.Contains(p.out.String(), want) {
			t.Errorf("rank %d (%s): %v\nstdout:\n%s\nstderr:\n%s", r, lang, err, p.out.String(), p.err.String())
		}
	}
}

// TestCWASICorpus runs the C binding's own test programs (abi/testdata)
// as WASI ranks: each checks its calls' results and prints "NAME ok".
// calls.c and types.c reach MPI_Op_create's functions and attribute copy
// and delete functions, which the host calls back in the guest, and
// MPI_BOTTOM with absolute addresses.
func TestCWASICorpus(t *testing.T) {
	needWASIClang(t)
	meshrun, meshcc := cTools(t)
	for _, tc := range []struct {
		name string
		n    []int
	}{
		{"calls", []int{1, 2, 3}},
		{"types", []int{1, 2, 3}},
		{"errors", []int{1, 3}},
		{"errsweep", []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := filepath.Join(t.TempDir(), tc.name+".wasm")
			if out, err := exec.Command(meshcc, "--target", "wasm32-wasi", "-Wall", "-Werror", "-O2", "-I../../abi/testdata",
				"-o", wasm, "../../abi/testdata/"+tc.name+".c", "-lm").CombinedOutput(); err != nil {
				t.Fatalf("meshcc: %v\n%s", err, out)
			}
			for _, n := range tc.n {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				out, err := exec.CommandContext(ctx, meshrun, "-n", fmt.Sprint(n), "--timeout", "2m", wasm).CombinedOutput()
				cancel()
				if err != nil || !strings.Contains(string(out), "[0] "+tc.name+" ok") {
					t.Errorf("meshrun -n %d %s.wasm: %v\n%s", n, tc.name, err, out)
				}
			}
		})
	}
}

// TestCWASIFiles: a C WASI rank sees meshrun's working directory as its
// own, as a native rank does: each rank writes a file by a relative path.
func TestCWASIFiles(t *testing.T) {
	needWASIClang(t)
	meshrun, _ := cTools(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "files.c")
	prog := `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    char name[32];
    snprintf(name, sizeof name, "out.%d.txt", r);
    FILE *f = fopen(name, "w");
    if (!f) { perror(name); return 1; }
    fprintf(f, "rank %d\n", r);
    fclose(f);
    MPI_Finalize();
    return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, meshrun, "-n", "2", "--timeout", "2m", src)
	c.Dir = dir
	c.Env = append(os.Environ(), "MESHCC_ROOT="+root) // meshcc run outside the module
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("meshrun -n 2 files.c: %v\n%s", err, out)
	}
	for r := range 2 {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out.%d.txt", r)))
		if err != nil || string(b) != fmt.Sprintf("rank %d\n", r) {
			t.Errorf("out.%d.txt: %q, %v", r, b, err)
		}
	}
}

// TestCWASIAbortKeepsOutput: a line a C WASI rank printed before
// MPI_Abort reaches meshrun (meshcc makes its stdout line-buffered: the
// abort ends the host process without flushing the guest's buffers), and
// the job ends with the abort's code.
func TestCWASIAbortKeepsOutput(t *testing.T) {
	needWASIClang(t)
	meshrun, _ := cTools(t)
	src := filepath.Join(t.TempDir(), "abort.c")
	prog := `#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    printf("rank %d before the abort\n", r);
    if (r == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, meshrun, "-n", "2", "--timeout", "2m", src).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(out), "[1] rank 1 before the abort") {
		t.Fatalf("meshrun -n 2 abort.c: %v (want exit status 3 and rank 1's line)\n%s", err, out)
	}
}

// TestCWASIReferenceHeader compiles a C example against the standard
// ABI's reference header (the shared reference directory beside the
// repository, not the project's mpi.h) with plain clang, whose module
// imports the calls from "env", and runs it as WASI ranks: the WASI side
// of the binding is the standard ABI too.
func TestCWASIReferenceHeader(t *testing.T) {
	needWASIClang(t)
	meshrun, _ := cTools(t)
	ref, _ := filepath.Abs("../../../shared/reference/mpi-abi")
	if _, err := os.Stat(filepath.Join(ref, "mpi.h")); err != nil {
		t.Skipf("no reference header at %s (the shared reference directory beside the repository): %v", ref, err)
	}
	wasm := filepath.Join(t.TempDir(), "heat.wasm")
	if out, err := exec.Command("clang", "--target=wasm32-wasi", "-O2", "-I"+ref, "-o", wasm, "../../examples/c/heat.c", "-lm",
		"-Wl,--allow-undefined", "-Wl,-z,stack-size=8388608").CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, meshrun, "-n", "3", "--timeout", "2m", wasm).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "matches the sequential run: ok") {
		t.Fatalf("meshrun -n 3 heat.wasm: %v\n%s", err, out)
	}
}
