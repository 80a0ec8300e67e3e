//go:build !js && !wasip1

package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/leaktest"
)

// framedRunPage is a run page in miniature, as seen by a framing page:
// it posts each change of its state to its parent as run.js does, and
// exits when its fetch of /exit returns.
const framedRunPage = `<!doctype html><title>run</title><script>
const run = { phase: "running", status: null, stdout: "", stderr: "", times: {}, left: [] };
const publish = () => parent.postMessage({ meshmpi: "run", ...run }, location.origin);
publish();
fetch("/exit").then((r) => r.text()).then((text) => {
  Object.assign(run, { phase: "exited", status: 0, stdout: text });
  publish();
});
</script>`

// TestFirefoxReports runs a page in a headless Firefox that no driver
// controls: the page's end reaches the test through the Reporter, and
// the browser and everything it started are gone afterwards.
func TestFirefoxReports(t *testing.T) {
	RequireFirefox(t)
	leaktest.Check(t)
	rep := NewReporter()
	mux := http.NewServeMux()
	mux.Handle(ReporterPrefix, rep)
	mux.HandleFunc("/run", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, framedRunPage)
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ranksuite ok") })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	w, err := rep.Watch(srv.URL + "/run?x=1")
	require.NoError(t, err)
	defer w.Close()
	ff, err := StartFirefox(w.URL)
	require.NoError(t, err)
	pgid := ff.cmd.Process.Pid
	select {
	case <-w.Exited():
	case <-ff.Exited():
		t.Fatalf("firefox exited: %v\n%s", ff.ExitErr(), ff.Log())
	}
	r := w.Last()
	require.Equal(t, "exited", r.Phase)
	require.NotNil(t, r.Status)
	require.Equal(t, 0, *r.Status)
	require.Equal(t, "ranksuite ok", r.Stdout)
	require.NoError(t, ff.Close())
	require.NoDirExists(t, ff.dir)
	require.Empty(t, groupMembers(t, pgid), "processes of the browser's group left running")
}

// TestRunInFirefoxBrowserGone: a browser that exits before its page
// reports ends the wait with ErrPageLost rather than at the deadline.
func TestRunInFirefoxBrowserGone(t *testing.T) {
	RequireFirefox(t)
	leaktest.Check(t)
	rep := NewReporter()
	// The page never loads: the server answers nothing until the test
	// ends, so only the browser's exit can end the wait.
	hang := make(chan struct{})
	defer close(hang)
	mux := http.NewServeMux()
	mux.Handle(ReporterPrefix, rep)
	mux.HandleFunc("/run", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	t.Setenv(EnvFirefox, "false") // a "browser" that exits at once
	_, err := RunInFirefox(context.Background(), rep, srv.URL+"/run")
	require.ErrorIs(t, err, ErrPageLost)
}

// groupMembers lists the processes of process group pgid (Linux /proc).
func groupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var left []string
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == fmt.Sprint(pgid) && f[0] != "Z" {
			left = append(left, s[:i+1])
		}
	}
	return left
}
