package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestShow(t *testing.T) {
	root, _ := filepath.Abs("../..")
	t.Setenv("MESHCC_ROOT", root)
	t.Setenv("MESHCC_CC", "gcc -std=c11")
	t.Setenv("MESHCC_CACHE", t.TempDir())
	var out, errb bytes.Buffer
	if code := run([]string{"-show", "-O2", "-o", "my prog", "pi.c"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := strings.TrimSpace(out.String())
	inc := "-I" + filepath.Join(root, "abi", "include")
	if !strings.HasPrefix(got, "gcc -std=c11 "+inc+" -O2 -o 'my prog' pi.c -L") ||
		!strings.Contains(got, " -lmpi_abi -Wl,-rpath,") {
		t.Errorf("-show printed %q", got)
	}
	out.Reset()
	if code := run([]string{"-show", "-c", "pi.c"}, &out, &errb); code != 0 {
		t.Fatal(code)
	}
	if got := strings.TrimSpace(out.String()); got != "gcc -std=c11 "+inc+" -c pi.c" {
		t.Errorf("-show -c printed %q: compiling only adds no library", got)
	}
}

// TestWASI checks the WASI target's command and, where clang for wasm32
// is installed, that examples/c/pi.c builds to a module importing the MPI
// calls from "mpi_abi" and exporting malloc.
func TestWASI(t *testing.T) {
	root, _ := filepath.Abs("../..")
	t.Setenv("MESHCC_ROOT", root)
	inc := "-I" + filepath.Join(root, "abi", "include")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-show", "--target", "wasm32-wasi", "-O2", "pi.c", "-o", "pi.wasm"},
			"clang --target=wasm32-wasi " + inc + " '$TMPDIR/meshcc_table_slot.c' -O2 pi.c -o pi.wasm -Wl,-z,stack-size=8388608 -Wl,--export=malloc -Wl,--export=free"},
		{[]string{"-show", "--target=wasm32-wasi", "-c", "pi.c"}, "clang --target=wasm32-wasi " + inc + " -c pi.c"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errb.String())
		}
		if got := strings.TrimSpace(out.String()); got != tc.want {
			t.Errorf("%v printed %q, want %q", tc.args, got, tc.want)
		}
	}
	probe := filepath.Join(t.TempDir(), "probe.c")
	if err := os.WriteFile(probe, []byte("#include <stdio.h>\nint main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("clang", "--target=wasm32-wasi", "-o", probe+".wasm", probe).CombinedOutput(); err != nil {
		t.Skipf("no clang for wasm32-wasi (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32): %v\n%s", err, out)
	}
	wasm := filepath.Join(t.TempDir(), "pi.wasm")
	var out, errb bytes.Buffer
	if code := run([]string{"--target", "wasm32-wasi", "-O2", "-o", wasm, filepath.Join(root, "examples", "c", "pi.c")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"\x00asm", "mpi_abi", "MPI_Reduce", "malloc"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("pi.wasm has no %q", s)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"a.c": "a.c", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "-Wl,-rpath,/x": "-Wl,-rpath,/x"} {
		if got := quote([]string{in}); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
	}
}
