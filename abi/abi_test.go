//go:build cgo

package abi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
)

// The tests build meshcc, meshrun and libmpi_abi.so once (into a
// temporary directory, the library through meshcc -lib), compile C
// programs with gcc and run them as real jobs: meshrun starts each rank
// as a process with the job in its environment, as it does for any
// native program, and the ranks meet over WebRTC on loopback.

var tmpRoot string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "meshmpi-abi")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

type toolset struct {
	meshcc, meshrun string
	lib             string // libmpi_abi.so
	env             []string
}

var (
	setupOnce sync.Once
	tools     toolset
	setupErr  error
)

// setup builds the tools, or skips the test where there is no C compiler.
func setup(t *testing.T) toolset {
	t.Helper()
	if testing.Short() {
		t.Skip("builds libmpi_abi.so and runs C programs as jobs; not in -short")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc on PATH: the C binding's tests compile C programs with it")
	}
	setupOnce.Do(func() {
		bin := filepath.Join(tmpRoot, "bin")
		tools.meshcc, tools.meshrun = filepath.Join(bin, "meshcc"), filepath.Join(bin, "meshrun")
		for _, c := range [][]string{
			{"go", "build", "-o", tools.meshcc, "../cmd/meshcc"},
			{"go", "build", "-o", tools.meshrun, "../cmd/meshrun"},
		} {
			if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
				setupErr = fmt.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
				return
			}
		}
		root, _ := filepath.Abs("..")
		tools.env = append(os.Environ(), "MESHCC_CC="+gcc, "MESHCC_ROOT="+root,
			"MESHCC_CACHE="+filepath.Join(tmpRoot, "cache"))
		c := exec.Command(tools.meshcc, "-lib")
		c.Env = tools.env
		out, err := c.Output()
		if err != nil {
			setupErr = fmt.Errorf("meshcc -lib: %v\n%s", err, exitStderr(err))
			return
		}
		tools.lib = strings.TrimSpace(string(out))
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return tools
}

func exitStderr(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}

// compile builds a C program with meshcc (our header), or with gcc and
// the include directory inc when it is not empty.
func compile(t *testing.T, ts toolset, out, src, inc string) string {
	t.Helper()
	bin := filepath.Join(tmpRoot, out)
	var c *exec.Cmd
	if inc == "" {
		c = exec.Command(ts.meshcc, "-Wall", "-Werror", "-O2", "-Itestdata", "-o", bin, src, "-lm")
	} else {
		dir := filepath.Dir(ts.lib)
		c = exec.Command("gcc", "-Wall", "-O2", "-I"+inc, "-Itestdata", "-o", bin, src,
			"-L"+dir, "-lmpi_abi", "-Wl,-rpath,"+dir, "-lm")
	}
	c.Env = ts.env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, out)
	}
	return bin
}

type result struct {
	stdout, stderr string
	code           int
}

// runJob runs bin as n ranks under meshrun; n == 0 runs it alone, without
// a launcher (a singleton world).
func runJob(t *testing.T, ts toolset, n int, bin string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var c *exec.Cmd
	if n == 0 {
		c = exec.CommandContext(ctx, bin)
	} else {
		c = exec.CommandContext(ctx, ts.meshrun, "-n", fmt.Sprint(n), bin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", strings.Join(c.Args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out\nstdout:\n%s\nstderr:\n%s", strings.Join(c.Args, " "), r.stdout, r.stderr)
	}
	return r
}

func expectOK(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("exit status %d, want 0 and %q in the output\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestExamples runs the C examples alone and as jobs of 3 and 4 ranks;
// each checks its own answer.
func TestExamples(t *testing.T) {
	ts := setup(t)
	for _, name := range []string{"pi", "ring", "allreduce", "heat"} {
		t.Run(name, func(t *testing.T) {
			bin := compile(t, ts, name, "../examples/c/"+name+".c", "")
			for _, n := range []int{0, 3, 4} {
				r := runJob(t, ts, n, bin)
				expectOK(t, r, "ok")
				if n > 0 && strings.Count(r.stdout, "[0] ") == 0 {
					t.Errorf("-n %d: no output of rank 0:\n%s", n, r.stdout)
				}
			}
		})
	}
}

// TestCalls runs the point-to-point, request, collective and
// communicator checks of testdata/calls.c on 1 to 5 ranks.
func TestCalls(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "calls", "testdata/calls.c", "")
	for _, n := range []int{0, 2, 3, 4, 5} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "calls ok")
		})
	}
}

// TestTypes checks derived datatypes: each constructor's layout, the
// envelopes and contents, pack and unpack, point-to-point and collectives
// with derived types, and their errors; alone (layouts only) and as jobs.
func TestTypes(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "types", "testdata/types.c", "")
	for _, n := range []int{0, 2, 3} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			expectOK(t, runJob(t, ts, n, bin), "types ok")
		})
	}
}

// TestErrors checks edge arguments under MPI_ERRORS_RETURN: invalid ranks,
// tags, counts, buffers, types, operations, roots, communicators and
// requests, truncation, MPI_PROC_NULL and MPI_REQUEST_NULL, and the
// calls that are stubs, each with its class and a message naming the call.
func TestErrors(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "errors", "testdata/errors.c", "")
	for _, n := range []int{0, 3} {
		expectOK(t, runJob(t, ts, n, bin), "errors ok")
	}
}

// TestErrSweep: errsweep.c's bad arguments through the real crossing,
// each kind of bad handle into the calls of each family, an
// intercommunicator where it is not allowed (two ranks and more); the
// library works after it.
func TestErrSweep(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "errsweep", "testdata/errsweep.c", "")
	for _, n := range []int{0, 2, 3} {
		expectOK(t, runJob(t, ts, n, bin), "errsweep ok")
	}
}

// TestFatal: under the default handler an error ends the job with status 1
// and a message that names the call and the class.
func TestFatal(t *testing.T) {
	ts := setup(t)
	bin := compile(t, ts, "fatal", "testdata/fatal.c", "")
	r := runJob(t, ts, 2, bin)
	if r.code != 1 {
		t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := regexp.MustCompile(`\[0\] meshmpi: MPI_Send: .*rank 3: invalid rank \(MPI_ERR_RANK\); MPI_ERRORS_ARE_FATAL ends the job`)
	if !want.MatchString(r.stderr) {
		t.Errorf("stderr does not say what failed:\n%s", r.stderr)
	}
	if strings.Contains(r.stdout, "after the error") {
		t.Errorf("the job went on after a fatal error:\n%s", r.stdout)
	}
}

// refDir is the MPI Forum's reference header of the standard ABI, beside
// the repository (never copied into it).
const refDir = "../../shared/reference/mpi-abi"

func reference(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(refDir, "mpi.h")); err != nil {
		t.Skipf("no reference header at %s (the shared reference directory beside the repository): %v", refDir, err)
	}
	return refDir
}

// TestReferenceHeader compiles programs against the reference header, not
// the project's, and runs them with libmpi_abi.so: the ABI is the
// standard one.
func TestReferenceHeader(t *testing.T) {
	ts := setup(t)
	ref := reference(t)
	for _, p := range []struct{ name, src, want string }{
		{"ref-calls", "testdata/calls.c", "calls ok"},
		{"ref-errors", "testdata/errors.c", "errors ok"},
		{"ref-types", "testdata/types.c", "types ok"},
		{"ref-heat", "../examples/c/heat.c", "ok"},
	} {
		bin := compile(t, ts, p.name, p.src, ref)
		expectOK(t, runJob(t, ts, 3, bin), p.want)
	}
}

var (
	protoRE = regexp.MustCompile(`(?m)^(int|double|MPI_Aint) (P?MPIX?_\w+)\(([^)]*)\);`)
	paramRE = regexp.MustCompile(`\s*\b\w+\s*((?:\[\])*(?:\[\d+\])*)$`)
)

// prototypes reads a header's prototypes: name → the types of its
// parameters (names dropped, spacing normalized, an array parameter T []
// written as the T * it is).
func prototypes(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range protoRE.FindAllStringSubmatch(string(b), -1) {
		var ps []string
		for _, p := range strings.Split(m[3], ",") {
			p = strings.TrimSpace(p)
			if p != "void" && p != "..." {
				p = paramRE.ReplaceAllString(p, " $1")
			}
			p = strings.Join(strings.Fields(strings.ReplaceAll(p, "*", " * ")), " ")
			ps = append(ps, strings.TrimSuffix(p, " []")+map[bool]string{true: " *"}[strings.HasSuffix(p, " []")])
		}
		out[m[2]] = m[1] + " (" + strings.Join(ps, ", ") + ")"
	}
	return out
}

// TestPrototypesMatchReference: every call of our header that the
// reference declares has the same return and parameter types.
func TestPrototypesMatchReference(t *testing.T) {
	ref := prototypes(t, filepath.Join(reference(t), "mpi.h"))
	ours := prototypes(t, "include/mpi.h")
	if len(ours) < 500 {
		t.Fatalf("only %d prototypes in include/mpi.h", len(ours))
	}
	var missing []string
	for name, sig := range ours {
		r, ok := ref[name]
		if !ok {
			if !strings.Contains(name, "MPIX_") {
				t.Errorf("%s is not in the reference header", name)
			}
			continue
		}
		if r != sig {
			t.Errorf("%s: ours %s, the reference %s", name, sig, r)
		}
	}
	for name := range ref {
		if _, ok := ours[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	t.Logf("%d calls of ours (with PMPI_), %d of the reference's not declared yet", len(ours), len(missing))
}

var constRE = regexp.MustCompile(`(?m)^#define\s+(MPIX?_[A-Z0-9_]+)\s+\S|^\s+(MPIX?_[A-Z0-9_]+)\s*=`)

func constants(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range constRE.FindAllStringSubmatch(string(b), -1) {
		out[m[1]+m[2]] = true
	}
	return out
}

// TestConstantsMatchReference compiles one program that prints every
// constant both headers define, and the sizes and layout of the ABI's
// types, against each header, and compares the outputs.
func TestConstantsMatchReference(t *testing.T) {
	ref := reference(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc on PATH")
	}
	ours, theirs := constants(t, "include/mpi.h"), constants(t, filepath.Join(ref, "mpi.h"))
	var names []string
	for n := range ours {
		if theirs[n] && n != "MPI_ABI_Aint" && !strings.HasPrefix(n, "MPI_T_") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) < 200 {
		t.Fatalf("only %d constants in common", len(names))
	}
	var src strings.Builder
	src.WriteString("#include <stddef.h>\n#include <stdio.h>\n#include <mpi.h>\nint main(void) {\n")
	for _, n := range names {
		fmt.Fprintf(&src, "\tprintf(\"%s %%lld\\n\", (long long)(intptr_t)(%s));\n", n, n)
	}
	for _, e := range []string{"sizeof(MPI_Status)", "offsetof(MPI_Status, MPI_SOURCE)", "offsetof(MPI_Status, MPI_TAG)",
		"offsetof(MPI_Status, MPI_ERROR)", "offsetof(MPI_Status, MPI_internal)", "sizeof(MPI_Aint)", "sizeof(MPI_Count)",
		"sizeof(MPI_Offset)", "sizeof(MPI_Fint)", "sizeof(MPI_Comm)", "sizeof(MPI_Request)", "sizeof(MPI_F08_status)"} {
		fmt.Fprintf(&src, "\tprintf(\"%s %%lld\\n\", (long long)(%s));\n", e, e)
	}
	src.WriteString("\treturn 0;\n}\n")
	file := filepath.Join(t.TempDir(), "consts.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, 2)
	for i, inc := range []string{"include", ref} {
		bin := filepath.Join(t.TempDir(), "consts")
		if out, err := exec.Command("gcc", "-Wall", "-I"+inc, "-o", bin, file).CombinedOutput(); err != nil {
			t.Fatalf("gcc -I%s: %v\n%s", inc, err, out)
		}
		out, err := exec.Command(bin).Output()
		if err != nil {
			t.Fatal(err)
		}
		outputs[i] = string(out)
	}
	a, b := strings.Split(outputs[0], "\n"), strings.Split(outputs[1], "\n")
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("ours %q, the reference %q", a[i], b[i])
		}
	}
	t.Logf("%d constants and the types' layout agree", len(names))
}

// TestSymbols: every call our header declares, MPI_ and PMPI_, is a
// symbol of libmpi_abi.so, so no program compiled against it fails to
// link or load.
func TestSymbols(t *testing.T) {
	ts := setup(t)
	out, err := exec.Command("nm", "-D", "--defined-only", ts.lib).Output()
	if err != nil {
		t.Skipf("nm -D: %v", err)
	}
	syms := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && strings.ContainsAny(f[1], "TW") {
			syms[f[2]] = true
		}
	}
	protos := prototypes(t, "include/mpi.h")
	for name := range protos {
		if !syms[name] {
			t.Errorf("%s is declared in include/mpi.h but libmpi_abi.so does not define it", name)
		}
	}
	t.Logf("%d calls declared and defined", len(protos))
}

// TestGenerated: include/mpi.h's prototypes, calls_gen.c, and the WASI
// side (include/mpi_wasi.h, wasi_gen.go) are what internal/gen makes of
// calls.txt and the Go side's exports.
func TestGenerated(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("*.go")
	files = append(files, "calls.txt", "include/mpi.h", "calls_gen.c", "include/mpi_wasi.h")
	if err := os.Mkdir(filepath.Join(dir, "include"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gen := filepath.Join(dir, "gen")
	if out, err := exec.Command("go", "build", "-o", gen, "./internal/gen").CombinedOutput(); err != nil {
		t.Fatalf("go build ./internal/gen: %v\n%s", err, out)
	}
	c := exec.Command(gen)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("internal/gen: %v\n%s", err, out)
	}
	for _, f := range []string{"include/mpi.h", "calls_gen.c", "include/mpi_wasi.h", "wasi_gen.go"} {
		want, _ := os.ReadFile(filepath.Join(dir, f))
		got, _ := os.ReadFile(f)
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what go generate makes: run go generate ./abi", f)
		}
	}
}

// TestMixedJob runs C ranks (testdata/mixed.c over libmpi_abi.so) and Go
// ranks (testdata/gorank) in one job: a signaling server of the test's
// own, a seat token per rank, and the environment meshrun gives a rank
// (meshmpi.EnvSignal, EnvJob, EnvToken, EnvRank).
func TestMixedJob(t *testing.T) {
	ts := setup(t)
	cbin := compile(t, ts, "mixed", "testdata/mixed.c", "")
	gobin := filepath.Join(tmpRoot, "gorank")
	if out, err := exec.Command("go", "build", "-o", gobin, "./testdata/gorank").CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/gorank: %v\n%s", err, out)
	}
	const n = 4
	srv, err := signaling.ListenLocal(signaling.Config{MaxJobSize: n})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	job := "abi-mixed"
	seats, err := srv.MintSeats(signaling.Claims{Job: job, Size: n, Expires: time.Now().Add(time.Hour).Unix(),
		Settings: map[string]string{meshmpi.SettingNetwork: "loopback"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type proc struct {
		cmd      *exec.Cmd
		out, err bytes.Buffer
	}
	procs := make([]*proc, n)
	for r := range n {
		bin := cbin // ranks 0 and 2 are C, 1 and 3 Go
		if r%2 == 1 {
			bin = gobin
		}
		p := &proc{cmd: exec.CommandContext(ctx, bin)}
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
