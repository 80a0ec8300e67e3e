package meshmpi

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The layers only import downward (DESIGN.md): op is a leaf, and coll and
// peer never import each other or the root package.
func TestDependencyDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	if runtime.GOOS == "wasip1" || runtime.GOOS == "js" {
		t.Skip("runs go list, a subprocess: there are none under " + runtime.GOOS)
	}
	const mod = "github.com/meshmpi/meshmpi"
	for pkg, forbidden := range map[string][]string{
		"op":   {mod + "/peer", mod + "/coll", mod + "\n"},
		"peer": {mod + "/coll", mod + "\n"},
		"coll": {mod + "/peer", mod + "\n"},
		"mesh": {mod + "/coll", mod + "\n"},
		// the agreement knows nothing of links, schedules or communicators
		"agree": {mod + "/peer", mod + "/coll", mod + "/op", mod + "\n"},
		// a WASI guest links no mesh or signaling: its host carries them
		"wasm": {mod + "/mesh", mod + "/signaling", mod + "\n"},
	} {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		deps := string(out)
		for _, f := range forbidden {
			require.NotContains(t, deps, f, "%s imports %s", pkg, strings.TrimSpace(f))
		}
	}
}
