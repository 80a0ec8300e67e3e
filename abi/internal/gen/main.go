// Command gen expands abi/calls.txt into the prototypes of
// abi/include/mpi.h (between its BEGIN CALLS and END CALLS lines) and the
// C entry points of abi/calls_gen.c. Run it from abi/ (go generate).
//
// Every call becomes PMPI_Name with MPI_Name a weak alias of it (the
// profiling interface, MPI-4.1 §15.2). A call whose Go side exists (a
// function exported as mpiabi_Name in abi/*.go) forwards to it with every
// pointer and handle as a uintptr_t, so Go never holds a handle constant
// or MPI_IN_PLACE in a pointer-typed variable; any other call raises
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (mpiabi_unsupported).
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Call is one expanded prototype.
type Call struct {
	Ret    string  // C return type
	Name   string  // MPI_Send, MPIX_Recv_accumulate
	Params []Param // empty for (void)
}

// Param is one parameter: its C declaration and the name in it.
type Param struct {
	Decl string
	Name string
}

var handleTypes = map[string]bool{
	"MPI_Comm": true, "MPI_Datatype": true, "MPI_Errhandler": true, "MPI_File": true,
	"MPI_Group": true, "MPI_Info": true, "MPI_Message": true, "MPI_Op": true,
	"MPI_Request": true, "MPI_Session": true, "MPI_Win": true,
}

// Section is a header section: its title and calls.
type Section struct {
	Title string
	Calls []Call
}

func main() {
	secs, err := parse("calls.txt")
	if err != nil {
		fail(err)
	}
	impl, err := implemented(".")
	if err != nil {
		fail(err)
	}
	if err := writeHeader("include/mpi.h", secs); err != nil {
		fail(err)
	}
	if err := writeC("calls_gen.c", secs, impl); err != nil {
		fail(err)
	}
	if err := writeWASIHeader("include/mpi_wasi.h", secs); err != nil {
		fail(err)
	}
	sigs, err := goSignatures(".")
	if err != nil {
		fail(err)
	}
	if err := writeWASI("wasi_gen.go", secs, impl, sigs); err != nil {
		fail(err)
	}
	if err := writeSweep("sweep_gen_test.go", secs, impl, sigs); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

var lineRE = regexp.MustCompile(`^(?:\[([a-z,]+)\]\s+)?(?:([A-Za-z_ ]+?\*?)\s+)?([A-Za-z_0-9]+)\((.*)\)$`)

func parse(path string) ([]Section, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var secs []Section
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "# ") || line == "#":
			continue
		case strings.HasPrefix(line, "## "):
			secs = append(secs, Section{Title: line[3:]})
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		if m == nil || len(secs) == 0 {
			return nil, fmt.Errorf("%s:%d: cannot read %q", path, n, line)
		}
		flags := map[string]bool{}
		if m[1] != "" {
			for _, fl := range strings.Split(m[1], ",") {
				flags[fl] = true
			}
		}
		ret := m[2]
		if ret == "" {
			ret = "int"
		}
		name := m[3]
		if !strings.HasPrefix(name, "MPIX_") {
			name = "MPI_" + name
		}
		var variants []Call
		for _, large := range []bool{false, true} {
			if large && !flags["c"] {
				continue
			}
			suffix := ""
			if large {
				suffix = "_c"
			}
			ps, err := params(m[4], large)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			variants = append(variants, Call{Ret: ret, Name: name + suffix, Params: ps})
			req := Param{Decl: "MPI_Request *request", Name: "request"}
			info := Param{Decl: "MPI_Info info", Name: "info"}
			if flags["i"] {
				base := strings.TrimPrefix(name, "MPI_")
				iname := "MPI_I" + strings.ToLower(base[:1]) + base[1:]
				variants = append(variants, Call{Ret: ret, Name: iname + suffix, Params: append(append([]Param{}, ps...), req)})
			}
			if flags["p"] {
				variants = append(variants, Call{Ret: ret, Name: name + "_init" + suffix, Params: append(append([]Param{}, ps...), info, req)})
			}
		}
		for _, c := range variants {
			if seen[c.Name] {
				return nil, fmt.Errorf("%s:%d: %s twice", path, n, c.Name)
			}
			seen[c.Name] = true
		}
		secs[len(secs)-1].Calls = append(secs[len(secs)-1].Calls, variants...)
	}
	return secs, sc.Err()
}

var nameRE = regexp.MustCompile(`([A-Za-z_][A-Za-z_0-9]*)\s*(\[\]|\[\]\[3\])?$`)

func params(s string, large bool) ([]Param, error) {
	s = strings.TrimSpace(s)
	if s == "void" {
		return nil, nil
	}
	count, counts, displs, countp := "int ", "const int ", "const int ", "int *"
	if large {
		count, counts, displs, countp = "MPI_Count ", "const MPI_Count ", "const MPI_Aint ", "MPI_Count *"
	}
	var ps []Param
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		switch {
		case strings.HasPrefix(p, "COUNTS "):
			p = counts + p[len("COUNTS "):] + "[]"
		case strings.HasPrefix(p, "DISPLS "):
			p = displs + p[len("DISPLS "):] + "[]"
		case strings.HasPrefix(p, "COUNTP "):
			p = countp + p[len("COUNTP "):]
		case strings.HasPrefix(p, "COUNT "):
			p = count + p[len("COUNT "):]
		}
		if p == "..." {
			ps = append(ps, Param{Decl: p})
			continue
		}
		m := nameRE.FindStringSubmatch(p)
		if m == nil {
			return nil, fmt.Errorf("no name in parameter %q", p)
		}
		ps = append(ps, Param{Decl: p, Name: m[1]})
	}
	return ps, nil
}

func (c Call) proto(prefix string) string {
	var b strings.Builder
	b.WriteString(c.Ret)
	if !strings.HasSuffix(c.Ret, "*") {
		b.WriteByte(' ')
	}
	b.WriteString(prefix + c.Name)
	b.WriteByte('(')
	if len(c.Params) == 0 {
		b.WriteString("void")
	}
	for i, p := range c.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Decl)
	}
	b.WriteByte(')')
	return b.String()
}

func writeHeader(path string, secs []Section) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const begin, end = "/* BEGIN CALLS", "/* END CALLS */"
	i, j := bytes.Index(old, []byte(begin)), bytes.Index(old, []byte(end))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no BEGIN CALLS … END CALLS", path)
	}
	i += bytes.IndexByte(old[i:], '\n') + 1
	var b bytes.Buffer
	b.Write(old[:i])
	for _, prefix := range []string{"", "P"} {
		if prefix == "P" {
			b.WriteString("\n/* The profiling interface: every call again as PMPI_. */\n")
		}
		for _, s := range secs {
			if prefix == "" {
				fmt.Fprintf(&b, "\n/* %s */\n", s.Title)
			}
			for _, c := range s.Calls {
				b.WriteString(c.proto(prefix) + ";\n")
			}
		}
	}
	b.Write(old[j:])
	return os.WriteFile(path, b.Bytes(), 0o644)
}

var exportRE = regexp.MustCompile(`(?m)^//export mpiabi_([A-Za-z_0-9]+)$`)

func implemented(dir string) (map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	impl := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range exportRE.FindAllSubmatch(b, -1) {
			impl[string(m[1])] = true
		}
	}
	return impl, nil
}

// arg is how a parameter crosses to Go: pointers, arrays and handles as
// uintptr_t, integers as they are.
func arg(p Param) string {
	t := strings.TrimSpace(strings.TrimSuffix(p.Decl, p.Name))
	if strings.Contains(p.Decl, "*") || strings.Contains(p.Decl, "[") || handleTypes[t] {
		return "(uintptr_t)" + p.Name
	}
	return p.Name
}

func writeC(path string, secs []Section, impl map[string]bool) error {
	var b bytes.Buffer
	b.WriteString(`// Code generated by abi/internal/gen from calls.txt; DO NOT EDIT.

#include <stdint.h>
#include "include/mpi.h"
#include "_cgo_export.h"

#define WEAK(name) __attribute__((weak, alias(#name)))
`)
	names := []string{}
	for _, s := range secs {
		fmt.Fprintf(&b, "\n// %s\n", s.Title)
		for _, c := range s.Calls {
			names = append(names, c.Name)
			short := strings.TrimPrefix(strings.TrimPrefix(c.Name, "MPI_"), "MPIX_")
			if strings.HasPrefix(c.Name, "MPIX_") {
				short = "X_" + short
			}
			fmt.Fprintf(&b, "\n%s {\n", c.proto("P"))
			if impl[short] {
				var args []string
				for _, p := range c.Params {
					if p.Name != "" {
						args = append(args, arg(p))
					}
				}
				fmt.Fprintf(&b, "\treturn mpiabi_%s(%s);\n", short, strings.Join(args, ", "))
			} else {
				if c.Ret != "int" {
					return fmt.Errorf("%s returns %s: implement it", c.Name, c.Ret)
				}
				comm := "(uintptr_t)MPI_COMM_SELF"
				for _, p := range c.Params {
					if p.Decl == "MPI_Comm "+p.Name {
						comm = "(uintptr_t)" + p.Name
						break
					}
				}
				for _, p := range c.Params {
					if p.Name != "" {
						fmt.Fprintf(&b, "\t(void)%s;\n", p.Name)
					}
				}
				fmt.Fprintf(&b, "\treturn mpiabi_unsupported(%s, (char *)%q);\n", comm, c.Name)
			}
			fmt.Fprintf(&b, "}\n%s WEAK(P%s);\n", c.proto(""), c.Name)
		}
	}
	sort.Strings(names)
	return os.WriteFile(path, b.Bytes(), 0o644)
}
