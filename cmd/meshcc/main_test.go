package main

import (
	"bytes"
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

func TestWasiNotYet(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"--target", "wasm32-wasi", "p.c"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "not there yet") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"a.c": "a.c", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "-Wl,-rpath,/x": "-Wl,-rpath,/x"} {
		if got := quote([]string{in}); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
	}
}
