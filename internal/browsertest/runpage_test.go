//go:build !js && !wasip1

package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// exitingPage is a run page in miniature: it shows its phase as run.js
// does, and exits when its fetch of /exit returns.
const exitingPage = `<!doctype html><title>run</title><div id="phase">running</div><script>
window.meshmpiRun = { phase: "running", status: null, stdout: "", stderr: "", times: {} };
fetch("/exit").then((r) => r.text()).then((text) => {
  Object.assign(window.meshmpiRun, { phase: "exited", status: 0, stdout: text });
  document.getElementById("phase").textContent = "exited";
});
</script>`

// WaitRun learns of the page's exit from the page, not by polling it on
// the page's timers: with the page's timers stopped (virtual time paused,
// as a browser's throttling of background tabs or a starved machine
// would delay them), a page that exits is seen to exit.
func TestWaitRunWithoutTimers(t *testing.T) {
	b := New(t)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, exitingPage)
	})
	mux.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			fmt.Fprint(w, "ranksuite ok")
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tab := b.Tab("waitrun", srv.URL)
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(srv.URL)))
	_, err := chromedp.Call(tab, emulation.SetVirtualTimePolicy, emulation.SetVirtualTimePolicyParams{Policy: emulation.VirtualTimePolicyPause})
	require.NoError(t, err)

	type result struct {
		r   RunResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := WaitRun(tab, time.Minute)
		done <- result{r, err}
	}()
	// The page exits while WaitRun waits (or before it looked: WaitRun
	// must see that too); a poller would look only when a page timer
	// fires, and none does.
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	res := <-done
	require.NoError(t, res.err)
	require.Equal(t, "exited", res.r.Phase)
	require.NotNil(t, res.r.Status)
	require.Equal(t, 0, *res.r.Status)
	require.Equal(t, "ranksuite ok", res.r.Stdout)
}
