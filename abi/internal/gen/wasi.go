package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// The WASI side (wasm32-wasi guests): include/mpi_wasi.h gives every
// prototype the import module "mpi_abi", and wasi_gen.go serves each
// import from the same mpiabi_ function a native entry point calls,
// translating the guest's 32-bit pointers, handles and MPI_Aint values.

// writeWASIHeader writes the redeclarations that make a wasm32 program
// import every call from module "mpi_abi" (mpi.h includes the file under
// __wasm__): declared without them, the calls would be undefined symbols
// at link time, or imports from "env" with --allow-undefined.
func writeWASIHeader(path string, secs []Section) error {
	var b bytes.Buffer
	b.WriteString(`/*
 * mpi_wasi.h: generated from abi/calls.txt by abi/internal/gen; do not edit.
 *
 * Included by mpi.h when compiling for WebAssembly: every call of the
 * header, MPI_ and PMPI_, is an import of module "mpi_abi" under its own
 * name, which meshmpi's WASI host (wasm/host, meshrun) provides.
 */
#ifndef MESHMPI_MPI_WASI_H
#define MESHMPI_MPI_WASI_H

#define MPI_WASI_IMPORT(name) __attribute__((import_module("mpi_abi"), import_name(#name)))
`)
	for _, prefix := range []string{"", "P"} {
		for _, s := range secs {
			for _, c := range s.Calls {
				fmt.Fprintf(&b, "%s MPI_WASI_IMPORT(%s%s);\n", c.proto(prefix), prefix, c.Name)
			}
		}
	}
	b.WriteString(`
/*
 * The host calls the program's own functions (MPI_Op_create's, attribute
 * copy and delete functions) through these exports: a function pointer
 * is an index into the module's table, which only the module can call.
 * Weak, so every file that includes mpi.h may define them.
 */
__attribute__((weak, export_name("mpi_abi_call_user_fn")))
void mpi_abi_call_user_fn(MPI_User_function *fn, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    fn(in, inout, len, dt);
}

__attribute__((weak, export_name("mpi_abi_call_user_fn_c")))
void mpi_abi_call_user_fn_c(MPI_User_function_c *fn, void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    fn(in, inout, len, dt);
}

__attribute__((weak, export_name("mpi_abi_call_copy")))
int mpi_abi_call_copy(MPI_Comm_copy_attr_function *fn, MPI_Comm obj, int keyval, void *extra, void *in, void *out, int *flag)
{
    return fn(obj, keyval, extra, in, out, flag);
}

__attribute__((weak, export_name("mpi_abi_call_delete")))
int mpi_abi_call_delete(MPI_Comm_delete_attr_function *fn, MPI_Comm obj, int keyval, void *val, void *extra)
{
    return fn(obj, keyval, val, extra);
}

#endif
`)
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// goSig is an mpiabi_ function's Go parameter and result types.
type goSig struct {
	params []string
	result string
}

// goSignatures reads the Go types of every mpiabi_ function in dir, so
// the WASI glue converts each argument to exactly its type.
func goSignatures(dir string) (map[string]goSig, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	sigs := map[string]goSig{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "wasi_gen.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "mpiabi_") {
				continue
			}
			var sg goSig
			for _, fl := range fd.Type.Params.List {
				t := exprString(fset, fl.Type)
				for range max(1, len(fl.Names)) {
					sg.params = append(sg.params, t)
				}
			}
			if fd.Type.Results != nil && len(fd.Type.Results.List) == 1 {
				sg.result = exprString(fset, fd.Type.Results.List[0].Type)
			}
			sigs[strings.TrimPrefix(fd.Name.Name, "mpiabi_")] = sg
		}
	}
	return sigs, nil
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	if err := format.Node(&b, fset, e); err != nil {
		return "?"
	}
	return b.String()
}

// wasiManual are the calls wasi.go serves by hand: they hand out memory
// or return pointers to the library's own values, which must be the
// guest's.
var wasiManual = map[string]bool{
	"MPI_Alloc_mem": true, "MPI_Free_mem": true,
	"MPI_Comm_get_attr": true, "MPI_Attr_get": true, "MPI_Type_get_attr": true,
}

// wasiParam is how one parameter crosses from the guest: its wasm value
// type and the Go expression of its host value (s is the stack).
func wasiParam(c Call, i int, p Param) (vt, expr string, err error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p.Decl, "[][3]"), "[]"), p.Name))
	array := strings.HasSuffix(p.Decl, "[]") && !strings.HasSuffix(p.Decl, "[][3]")
	s := fmt.Sprintf("s[%d]", i)
	elem := strings.TrimPrefix(t, "const ")
	readOnly := strings.HasPrefix(t, "const ")
	if array || strings.HasSuffix(p.Decl, "[][3]") {
		if !array || !(handleTypes[elem] || elem == "MPI_Aint") {
			return "i32", "g.ptr(" + s + ")", nil
		}
		n, err := wasiLen(c, p)
		if err != nil {
			return "", "", err
		}
		kind := "g.handles"
		if elem == "MPI_Aint" {
			kind = "g.aints"
		} else if elem == "MPI_Datatype" {
			kind = "g.types"
		}
		return "i32", fmt.Sprintf("%s(%s, %s, %v)", kind, s, n, readOnly), nil
	}
	switch {
	case p.Decl == "...":
		return "i32", "", nil
	case t == "int" || t == "const int" || t == "MPI_Fint":
		return "i32", "int32(uint32(" + s + "))", nil
	case t == "MPI_Count" || t == "MPI_Offset":
		return "i64", "int64(" + s + ")", nil
	case t == "MPI_Aint":
		return "i32", "int64(int32(uint32(" + s + ")))", nil
	case t == "double":
		return "f64", "math.Float64frombits(" + s + ")", nil
	case t == "MPI_Datatype":
		return "i32", "wasiType(" + s + ")", nil
	case handleTypes[t]:
		return "i32", "uintptr(uint32(" + s + "))", nil
	case t == "MPI_User_function *" || t == "MPI_User_function_c *":
		return "i32", fmt.Sprintf("g.opFn(%s, %v)", s, strings.HasSuffix(t, "_c *")), nil
	case t == "MPI_Comm_copy_attr_function *" || t == "MPI_Type_copy_attr_function *" || t == "MPI_Copy_function *":
		return "i32", "g.copyFn(" + s + ")", nil
	case t == "MPI_Comm_delete_attr_function *" || t == "MPI_Type_delete_attr_function *" || t == "MPI_Delete_function *":
		return "i32", "g.deleteFn(" + s + ")", nil
	case strings.Contains(t, "copy") || strings.Contains(t, "Copy_function"):
		return "i32", "g.callback(" + s + ", true)", nil
	case strings.Contains(t, "function") || strings.HasSuffix(t, "_fn *"):
		return "i32", "g.callback(" + s + ", false)", nil
	case strings.HasSuffix(t, "*") && handleTypes[strings.TrimSpace(strings.TrimSuffix(elem, "*"))]:
		return "i32", "g.handle(" + s + ")", nil
	case elem == "MPI_Aint *" && p.Name == "address":
		return "i32", "g.address(" + s + ")", nil
	case elem == "MPI_Aint *":
		return "i32", "g.aint(" + s + ")", nil
	case elem == "void *" && (p.Name == "attribute_val" || p.Name == "extra_state"):
		return "i32", "uintptr(uint32(" + s + "))", nil
	case elem == "void *" && p.Name == "buffer_addr":
		return "i32", "g.bufferOut(" + s + ")", nil
	case elem == "void *":
		// NULL is MPI_BOTTOM (the guest's address 0) with a derived
		// datatype, whose displacements may be absolute; with a
		// predefined one it stays NULL, for the call to check
		for j := i + 1; j < len(c.Params); j++ {
			if c.Params[j].Decl == "MPI_Datatype "+c.Params[j].Name {
				return "i32", fmt.Sprintf("g.buf(%s, s[%d])", s, j), nil
			}
		}
		return "i32", "g.buf(" + s + ", 0)", nil
	case strings.Contains(t, "*") || strings.Contains(p.Decl, "["):
		return "i32", "g.ptr(" + s + ")", nil
	}
	return "", "", fmt.Errorf("%s: no WASI translation for parameter %q", c.Name, p.Decl)
}

// wasiLen is the Go expression of the length of an array of handles or
// MPI_Aint values: a count parameter of the call, or what the
// communicator's processes need.
func wasiLen(c Call, p Param) (string, error) {
	param := func(names ...string) string {
		for _, n := range names {
			for i, q := range c.Params {
				if q.Name == n {
					return fmt.Sprintf("int(int32(uint32(s[%d])))", i)
				}
			}
		}
		return ""
	}
	switch p.Name {
	case "array_of_addresses":
		if e := param("max_addresses"); e != "" {
			return e, nil
		}
	case "array_of_datatypes":
		if e := param("max_datatypes"); e != "" {
			return e, nil
		}
	case "array_of_requests", "array_of_displacements", "array_of_types", "array_of_info":
		if e := param("count", "incount"); e != "" {
			return e, nil
		}
	default:
		for i, q := range c.Params {
			if q.Decl == "MPI_Comm "+q.Name {
				return fmt.Sprintf("g.commLen(uintptr(uint32(s[%d])))", i), nil
			}
		}
	}
	return "", fmt.Errorf("%s: no length for array %s", c.Name, p.Name)
}

// writeWASI writes wasi_gen.go: the table of every call a wasm32 guest
// imports, each with its wasm signature and the function that serves it.
func writeWASI(path string, secs []Section, impl map[string]bool, sigs map[string]goSig) error {
	var b bytes.Buffer
	b.WriteString(`// Code generated by abi/internal/gen from calls.txt; DO NOT EDIT.

//go:build cgo

package abi

import "C"

import "math"

var _ = math.Float64frombits

// wasiCalls is every call of the header as a wasm32 guest imports it.
var wasiCalls = [...]WASICall{
`)
	var fns bytes.Buffer
	for _, s := range secs {
		for _, c := range s.Calls {
			short := strings.TrimPrefix(strings.TrimPrefix(c.Name, "MPI_"), "MPIX_")
			if strings.HasPrefix(c.Name, "MPIX_") {
				short = "X_" + short
			}
			var params []string
			var exprs []string
			comm := "self"
			for i, p := range c.Params {
				vt, e, err := wasiParam(c, i, p)
				if err != nil {
					return err
				}
				params = append(params, map[string]string{"i32": "'i'", "i64": "'I'", "f64": "'F'"}[vt])
				if p.Name != "" {
					exprs = append(exprs, e)
				}
				if p.Decl == "MPI_Comm "+p.Name && comm == "self" {
					comm = fmt.Sprintf("uintptr(uint32(s[%d]))", i)
				}
			}
			var res string
			switch c.Ret {
			case "int", "MPI_Aint":
				res = "'i'"
			case "double":
				res = "'F'"
			default:
				return fmt.Errorf("%s returns %s: no WASI result for it", c.Name, c.Ret)
			}
			vts := strings.Join(params, ", ")
			fn := "wasi_" + short
			if wasiManual[c.Name] {
				fn = "wasiManual_" + short
			}
			fmt.Fprintf(&b, "\t{Name: %q, Params: []byte{%s}, Result: %s, fn: %s},\n", c.Name, vts, res, fn)
			if wasiManual[c.Name] {
				continue
			}
			fmt.Fprintf(&fns, "\nfunc %s(g *WASIGuest, s []uint64) {\n", fn)
			if !impl[short] {
				fmt.Fprintf(&fns, "\ts[0] = uint64(uint32(g.unsupported(%s, %q)))\n}\n", comm, c.Name)
				continue
			}
			sg, ok := sigs[short]
			if !ok || len(sg.params) != len(exprs) {
				return fmt.Errorf("%s: mpiabi_%s has %d parameters, the header %d", c.Name, short, len(sg.params), len(exprs))
			}
			fns.WriteString("\tg.begin()\n")
			var args []string
			for i, e := range exprs {
				fmt.Fprintf(&fns, "\ta%d := %s\n", i, e)
				args = append(args, fmt.Sprintf("%s(a%d)", sg.params[i], i))
			}
			if c.Ret == "int" {
				fmt.Fprintf(&fns, "\tif err := g.err(); err != nil {\n\t\tg.end()\n\t\ts[0] = uint64(uint32(g.raise(%s, %q, err)))\n\t\treturn\n\t}\n", comm, c.Name)
			}
			fmt.Fprintf(&fns, "\tr := mpiabi_%s(%s)\n\tg.end()\n", short, strings.Join(args, ", "))
			switch {
			case c.Ret == "double":
				fns.WriteString("\ts[0] = math.Float64bits(r)\n")
			default:
				fns.WriteString("\ts[0] = uint64(uint32(int32(r)))\n")
			}
			fns.WriteString("}\n")
		}
	}
	b.WriteString("}\n")
	b.Write(fns.Bytes())
	out, err := format.Source(b.Bytes())
	if err != nil {
		os.WriteFile(path, b.Bytes(), 0o644)
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, out, 0o644)
}
