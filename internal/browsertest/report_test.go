//go:build !js && !wasip1

package browsertest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The Reporter frames pages of its own origin only, keeps the newest report (fetches may arrive out of
// order), ends the watch at the first exited state, keeps the page's
// errors, and refuses reports for pages it does not watch.
func TestReporterTakesReports(t *testing.T) {
	rep := NewReporter()
	srv := httptest.NewServer(rep)
	defer srv.Close()
	w, err := rep.Watch(srv.URL + "/run?job=j&token=t")
	require.NoError(t, err)

	u, err := url.Parse(w.URL)
	require.NoError(t, err)
	require.Equal(t, "/run?job=j&token=t", u.Query().Get("src"))
	page, err := http.Get(w.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, page.StatusCode)
	page.Body.Close()

	id := strings.TrimPrefix(u.Path, ReporterPrefix+"frame/")
	// the frame shows pages of its own origin only
	other, err := http.Get(srv.URL + u.Path + "?src=" + url.QueryEscape("//evil.example/run"))
	require.NoError(t, err)
	other.Body.Close()
	require.Equal(t, http.StatusBadRequest, other.StatusCode)

	post := func(body string) int {
		t.Helper()
		r, err := http.Post(srv.URL+ReporterPrefix+"report/"+id, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		r.Body.Close()
		return r.StatusCode
	}
	require.Equal(t, http.StatusNoContent, post(`{"seq":2,"state":{"phase":"ready"}}`))
	require.Equal(t, http.StatusNoContent, post(`{"seq":1,"state":{"phase":"connecting"}}`)) // late: ignored
	require.Equal(t, "ready", w.Last().Phase)
	require.Equal(t, http.StatusNoContent, post(`{"seq":3,"error":"TypeError: x is undefined"}`))
	require.Equal(t, []string{"TypeError: x is undefined"}, w.Errors())
	select {
	case <-w.Exited():
		t.Fatal("exited before the page said so")
	default:
	}
	require.Equal(t, http.StatusNoContent, post(`{"seq":4,"state":{"phase":"exited","status":0,"stdout":"ok"}}`))
	<-w.Exited()
	require.Equal(t, http.StatusNoContent, post(`{"seq":5,"state":{"phase":"exited","status":0,"stdout":"ok\nbye"}}`))
	require.Equal(t, "ok\nbye", w.Last().Stdout)

	w.Close()
	require.Equal(t, http.StatusNotFound, post(`{"seq":6,"state":{"phase":"exited"}}`))
	_, err = rep.Watch("/run?job=j")
	require.Error(t, err, "a watch needs the run page's origin")
}
