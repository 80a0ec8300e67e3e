//go:build !js && !wasip1

package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// countModule is a module whose export count(n) runs a loop n times (at
// least once) and returns how many times it ran; it imports sched_yield
// and has no global section, so the rewriter adds one.
var countModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	// types: () -> i32, (i32) -> i32
	0x01, 0x0a, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f,
	// import wasi_snapshot_preview1.sched_yield: type 0
	0x02, 0x26, 0x01,
	0x16, 'w', 'a', 's', 'i', '_', 's', 'n', 'a', 'p', 's', 'h', 'o', 't', '_', 'p', 'r', 'e', 'v', 'i', 'e', 'w', '1',
	0x0b, 's', 'c', 'h', 'e', 'd', '_', 'y', 'i', 'e', 'l', 'd',
	0x00, 0x00,
	// functions: type 1
	0x03, 0x02, 0x01, 0x01,
	// export count: function 1
	0x07, 0x09, 0x01, 0x05, 'c', 'o', 'u', 'n', 't', 0x00, 0x01,
	// code: local i32; loop { l1 += 1; br_if l1 < l0 }; l1
	0x0a, 0x19, 0x01, 0x17, 0x01, 0x01, 0x7f,
	0x03, 0x40,
	0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01,
	0x20, 0x01, 0x20, 0x00, 0x49, 0x0d, 0x00,
	0x0b,
	0x20, 0x01,
	0x0b,
}

// TestLoopBudget: a rewritten module computes what the original does,
// and its loops call sched_yield once per loopBudget iterations.
func TestLoopBudget(t *testing.T) {
	ctx := context.Background()
	mod, err := addLoopBudget(countModule)
	require.NoError(t, err)
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	var yields int
	var budget api.MutableGlobal
	_, err = rt.NewHostModuleBuilder("wasi_snapshot_preview1").
		NewFunctionBuilder().WithFunc(func(context.Context) int32 {
		yields++
		budget.Set(loopBudget)
		return 0
	}).Export("sched_yield").Instantiate(ctx)
	require.NoError(t, err)
	m, err := rt.Instantiate(ctx, mod)
	require.NoError(t, err)
	budget = m.ExportedGlobal(budgetGlobal).(api.MutableGlobal)
	require.EqualValues(t, loopBudget, budget.Get())
	for _, n := range []uint64{1, loopBudget - 1, 3*loopBudget + 5} {
		yields = 0
		budget.Set(loopBudget)
		res, err := m.ExportedFunction("count").Call(ctx, n)
		require.NoError(t, err)
		require.Equal(t, n, res[0], "count(%d)", n)
		require.EqualValues(t, n/loopBudget, yields, "count(%d)", n)
	}
	// the host sets the budget to 1: the next iteration calls it
	yields = 0
	budget.Set(1)
	_, err = m.ExportedFunction("count").Call(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, 1, yields)
}

// TestLoopBudgetRefuses: modules the rewriter does not handle are left
// to wazero's checks, with an error saying why.
func TestLoopBudgetRefuses(t *testing.T) {
	noYield := append([]byte(nil), countModule...)
	copy(noYield[8+12+3+1+22+1:], "sched_yielx")
	simd := append([]byte(nil), countModule...)
	simd[len(simd)-3] = 0xfd // local.get → a SIMD prefix
	for name, mod := range map[string][]byte{
		"not wasm":           []byte("\x00asn\x01\x00\x00\x00"),
		"no sched_yield":     noYield,
		"a SIMD opcode":      simd,
		"cut short":          countModule[:len(countModule)-4],
		"an empty module":    countModule[:8],
		"a section too long": append(append([]byte(nil), countModule[:8]...), 0x01, 0x7f, 0x00),
	} {
		_, err := addLoopBudget(mod)
		require.Error(t, err, name)
	}
}
