//go:build !js && !wasip1

package host

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Why loops count down a budget.
//
// A guest that computes without calling its host must still stop when
// its run ends, and must not hold up the host process's garbage
// collector: machine code cannot be preempted, so a stop-the-world
// waits until the guest's goroutine is back in Go. wazero's way
// (WithCloseOnContextDone) puts a call at every loop header that leaves
// the machine code for Go and comes back (wazevo's
// ExitCodeCheckModuleExitCode): per relay round trip some 20-25 µs of
// CPU, and a Go exit per iteration of every loop of a computing rank.
// Instead, the host rewrites the module before compiling it: it adds one
// mutable i32 global, exported as budgetGlobal, and after every loop
// opcode
//
//	global.get $b; i32.const 1; i32.sub; global.set $b
//	global.get $b; i32.eqz; if; call $sched_yield; drop; end
//
// a load, a store and a branch per iteration; once in loopBudget
// iterations the guest calls WASI's sched_yield, which the host serves
// in Go (poll.go's guestYield): there the runtime may stop the world,
// the guest stops if its run ended, and the budget is refilled. When the
// run ends, Run sets the budget to 1, so the guest stops at its next
// loop iteration (a guest waiting in a host call stops there:
// stopIfDone). The global is the module's last and sched_yield one of
// its imports, so no index moves; the inserted block is stack-neutral
// and holds no branch, so no branch depth moves either. A module the
// rewriter does not handle (no sched_yield import, as a C program that
// never yields; an opcode outside what Go and clang emit: SIMD,
// threads, exceptions, tail calls) keeps wazero's checks.

// loopBudget is how many loop iterations a guest runs between two calls
// of its host: a few tens of microseconds of computing, so a garbage
// collection waits no longer than that for a computing guest, and the
// call (~0.1 µs) costs well under 1%.
const loopBudget = 1 << 14

// budgetGlobal is the export name of the added global.
const budgetGlobal = "meshmpi.loop_budget"

// errUnknownOpcode says the rewriter met an instruction it cannot step
// over: the module is compiled with wazero's checks instead.
var errUnknownOpcode = errors.New("wasm host: an opcode the loop-budget rewriter does not know")

// addLoopBudget returns module with the budget global and its loop
// checks (see "Why loops count down a budget").
func addLoopBudget(module []byte) ([]byte, error) {
	if len(module) < 8 || string(module[:4]) != "\x00asm" || binary.LittleEndian.Uint32(module[4:8]) != 1 {
		return nil, errors.New("wasm host: not a WebAssembly 1.0 module")
	}
	type section struct {
		id   byte
		body []byte
	}
	var secs []section
	for r := module[8:]; len(r) > 0; {
		id := r[0]
		n, k := uleb(r[1:])
		if k == 0 || uint64(len(r)-1-k) < n {
			return nil, errors.New("wasm host: malformed section header")
		}
		secs = append(secs, section{id, r[1+k : 1+k+int(n)]})
		r = r[1+k+int(n):]
	}
	var importedGlobals, definedGlobals uint64
	yield := int64(-1)
	globalAt, exportAt, codeAt := -1, -1, -1
	for i, s := range secs {
		switch s.id {
		case 2:
			var err error
			importedGlobals, yield, err = scanImports(s.body)
			if err != nil {
				return nil, err
			}
		case 6:
			globalAt = i
			definedGlobals, _ = uleb(s.body)
		case 7:
			exportAt = i
		case 10:
			codeAt = i
		}
	}
	if codeAt < 0 || exportAt < 0 {
		return nil, errors.New("wasm host: a module without code or exports")
	}
	if yield < 0 {
		return nil, errors.New("wasm host: the module does not import sched_yield")
	}
	g := importedGlobals + definedGlobals
	check := appendUleb([]byte{0x23}, g)    // global.get $b
	check = append(check, 0x41, 0x01, 0x6b) // i32.const 1; i32.sub
	check = appendUleb(append(check, 0x24), g)
	check = appendUleb(append(check, 0x23), g)
	check = append(check, 0x45, 0x04, 0x40) // i32.eqz; if
	check = appendUleb(append(check, 0x10), uint64(yield))
	check = append(check, 0x1a, 0x0b) // drop; end

	// the global: mutable i32, loopBudget
	glob := appendUleb([]byte{0x7f, 0x01, 0x41}, loopBudget) // a positive s32 below 2^20: its ULEB is its SLEB
	glob = append(glob, 0x0b)
	if globalAt < 0 {
		// no global section: one goes before the exports
		secs = append(secs[:exportAt], append([]section{{6, nil}}, secs[exportAt:]...)...)
		globalAt, exportAt, codeAt = exportAt, exportAt+1, codeAt+1
	}
	secs[globalAt].body = withCount(secs[globalAt].body, 1, glob)
	exp := appendUleb(nil, uint64(len(budgetGlobal)))
	exp = append(append(exp, budgetGlobal...), 0x03)
	exp = appendUleb(exp, g)
	secs[exportAt].body = withCount(secs[exportAt].body, 1, exp)

	code, err := rewriteCode(secs[codeAt].body, check)
	if err != nil {
		return nil, err
	}
	secs[codeAt].body = code

	out := make([]byte, 0, len(module)+len(module)/8)
	out = append(out, module[:8]...)
	for _, s := range secs {
		out = append(out, s.id)
		out = appendUleb(out, uint64(len(s.body)))
		out = append(out, s.body...)
	}
	return out, nil
}

// withCount returns a vector section's body with add entries more,
// entries appended at its end.
func withCount(body []byte, add uint64, entries []byte) []byte {
	n, k := uleb(body)
	out := appendUleb(nil, n+add)
	out = append(out, body[k:]...)
	return append(out, entries...)
}

// scanImports counts the global imports of an import section and finds
// the function index of WASI's sched_yield (-1: not imported).
func scanImports(b []byte) (globals uint64, yield int64, err error) {
	r := reader{b: b}
	n := r.u()
	yield = -1
	var funcs int64
	for range n {
		mod := r.name()
		field := r.name()
		switch kind := r.byte(); kind {
		case 0x00: // function: type index
			r.u()
			if mod == "wasi_snapshot_preview1" && field == "sched_yield" {
				yield = funcs
			}
			funcs++
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory: limits
			r.limits()
		case 0x03: // global: valtype, mutability
			r.byte()
			r.byte()
			globals++
		default:
			return 0, -1, fmt.Errorf("wasm host: import kind %#x", kind)
		}
	}
	return globals, yield, r.err
}

// rewriteCode puts check after every loop opcode of every function body
// of a code section.
func rewriteCode(b []byte, check []byte) ([]byte, error) {
	r := reader{b: b}
	n := r.u()
	out := appendUleb(make([]byte, 0, len(b)+len(b)/8), n)
	var body []byte
	for range n {
		size := int(r.u())
		start := r.off
		r.skip(size)
		if r.err != nil {
			return nil, r.err
		}
		var err error
		body, err = rewriteBody(body[:0], b[start:start+size], check)
		if err != nil {
			return nil, err
		}
		out = appendUleb(out, uint64(len(body)))
		out = append(out, body...)
	}
	if r.off != len(b) {
		return nil, errors.New("wasm host: code section longer than its functions")
	}
	return out, r.err
}

// rewriteBody appends one function body to out with check after every
// loop opcode.
func rewriteBody(out, b []byte, check []byte) ([]byte, error) {
	r := reader{b: b}
	for range r.u() { // locals: count, type
		r.u()
		r.byte()
	}
	out = append(out, b[:r.off]...)
	for r.off < len(b) && r.err == nil {
		at := r.off
		op := r.byte()
		switch {
		case op == 0x03: // loop
			r.blockType()
			out = append(out, b[at:r.off]...)
			out = append(out, check...)
			continue
		case op == 0x02 || op == 0x04: // block, if
			r.blockType()
		case op <= 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b, op == 0xd1:
			// no immediate
		case op == 0x0c || op == 0x0d, op >= 0x20 && op <= 0x26, op == 0x10, op == 0xd2:
			r.u()
		case op == 0x0e: // br_table
			for range r.u() {
				r.u()
			}
			r.u()
		case op == 0x11: // call_indirect: type, table
			r.u()
			r.u()
		case op == 0x1c: // select t*
			for range r.u() {
				r.byte()
			}
		case op >= 0x28 && op <= 0x3e: // loads and stores: align, offset
			r.u()
			r.u()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.u()
		case op == 0x41 || op == 0x42: // i32.const, i64.const (signed LEB: same bytes)
			r.u64()
		case op == 0x43:
			r.skip(4)
		case op == 0x44:
			r.skip(8)
		case op >= 0x45 && op <= 0xc4: // numeric, sign extension
		case op == 0xd0: // ref.null t
			r.byte()
		case op == 0xfc:
			switch sub := r.u(); {
			case sub <= 7: // saturating truncations
			case sub == 8, sub == 10, sub == 12, sub == 14: // memory.init, memory.copy, table.init, table.copy
				r.u()
				r.u()
			case sub <= 17: // data.drop, memory.fill, elem.drop, table.grow/size/fill
				r.u()
			default:
				return nil, fmt.Errorf("%w: 0xfc %d", errUnknownOpcode, sub)
			}
		default:
			return nil, fmt.Errorf("%w: %#x", errUnknownOpcode, op)
		}
		out = append(out, b[at:r.off]...)
	}
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// reader steps over a module's bytes; past the end it keeps err and
// reads zeros.
type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("wasm host: module ends inside an instruction")

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.err = errShort
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *reader) skip(n int) {
	if n < 0 || len(r.b)-r.off < n {
		r.err = errShort
		r.off = len(r.b)
		return
	}
	r.off += n
}

// u reads an unsigned LEB128 of a u32's range.
func (r *reader) u() uint64 {
	v, k := uleb(r.b[min(r.off, len(r.b)):])
	if k == 0 || k > 5 {
		r.err = errShort
		r.off = len(r.b)
		return 0
	}
	r.off += k
	return v
}

// u64 steps over a LEB128 of up to 64 bits (signed or not).
func (r *reader) u64() {
	_, k := uleb(r.b[min(r.off, len(r.b)):])
	if k == 0 {
		r.err = errShort
		r.off = len(r.b)
	}
	r.off += k
}

// name reads a name: its length, then its bytes.
func (r *reader) name() string {
	n := int(r.u())
	at := r.off
	r.skip(n)
	if r.err != nil {
		return ""
	}
	return string(r.b[at:r.off])
}

func (r *reader) limits() {
	if r.byte()&1 != 0 {
		r.u()
	}
	r.u()
}

// blockType steps over a block type: empty, a value type, or a type
// index (a signed LEB128).
func (r *reader) blockType() {
	if r.off < len(r.b) && (r.b[r.off] == 0x40 || r.b[r.off]&0xc0 == 0x40) {
		r.off++ // empty (0x40) or a one-byte value type (negative as s33)
		return
	}
	r.u64()
}

// uleb decodes an unsigned LEB128 at the start of b: its value and its
// length, 0 if b ends inside it or it runs past 10 bytes.
func uleb(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

func appendUleb(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
