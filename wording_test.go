package meshmpi

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// What a user reads: every error a program can trigger says in its first
// clause (the text before the first ": ") what went wrong in the user's
// terms — no Go type names, no hex, no library internals, no wildcard
// shown as a number — and says "process failed" once.
var (
	goTypeName  = regexp.MustCompile(`\*?\b[a-z][a-z0-9]*\.[A-Z]\w*|\[\][a-z]\w*|\bmap\[`)
	internals   = regexp.MustCompile(`(?i)pion|sctp|dtls|abort chunk|datachannel|goroutine|nil pointer|<nil>`)
	hexNumber   = regexp.MustCompile(`0x[0-9a-fA-F]`)
	wildcardNum = regexp.MustCompile(`\b(from|to|rank|tag|source) -[12]\b`)
)

func checkWording(t *testing.T, what string, err error) {
	t.Helper()
	require.Error(t, err, what)
	msg := err.Error()
	first, _, _ := strings.Cut(msg, ": ")
	require.NotRegexp(t, goTypeName, first, "%s: %q", what, msg)
	require.NotRegexp(t, internals, first, "%s: %q", what, msg)
	require.NotRegexp(t, wildcardNum, msg, "%s: %q", what, msg)
	require.NotRegexp(t, hexNumber, msg, "%s: tags and numbers as the user wrote them: %q", what, msg)
	require.NotContains(t, msg, "<nil>", "%s: %q", what, msg)
	require.LessOrEqual(t, strings.Count(msg, ErrProcFailed.Error()), 1, "%s: %q", what, msg)
	require.NotContains(t, msg, "%!", "%s: a formatting verb went wrong: %q", what, msg)
}

func TestErrorWording(t *testing.T) {
	var (
		mu   sync.Mutex
		errs = map[string]error{}
	)
	note := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := errs[what]; !ok || errs[what] == nil {
			errs[what] = err // a rank whose part completed has none: keep looking
		}
	}
	// arguments and mismatches, on a live world
	_ = Run(3, func(w *Comm) error {
		buf := make([]int32, 4)
		if w.Rank() == 0 {
			note("send to a rank out of range", Send(w, buf, 7, 0))
			note("send with a negative tag", Send(w, buf, 1, -5))
			note("receive from a rank out of range", func() error { _, err := Recv(w, buf, 9, 0); return err }())
			note("link info of a rank out of range", func() error { _, err := w.LinkInfo(-4); return err }())
		}
		// collectives every rank calls alike (one rank's call alone would
		// be an erroneous program)
		note("bcast from a root out of range", Bcast(w, buf, 5))
		note("reduce with a nil op", Reduce(w, buf, make([]int32, 4), nil, 0))
		note("allreduce aliased buffers", Allreduce(w, buf, buf[1:3], Sum))
		note("scatterv with a negative count", Scatterv(w, buf, []int{-1, 1, 1}, []int{0, 1, 2}, buf[:1], 0))
		// ranks that disagree: rank 1 broadcasts 2 elements, the others 4
		n := 4
		if w.Rank() == 1 {
			n = 2
		}
		note("bcast with counts that differ across ranks", Bcast(w, buf[:n], 0))
		// a truncated message: rank 1 sends 4, rank 2 receives 2
		switch w.Rank() {
		case 1:
			_ = Send(w, buf, 2, 3)
		case 2:
			_, err := Recv(w, buf[:2], AnySource, AnyTag)
			note("receive into a short buffer from any source", err)
		}
		return nil
	})
	// a lost peer: rank 2 fails, the others wait for it
	_ = Run(3, func(w *Comm) error {
		if w.Rank() == 2 {
			return errors.New("rank 2 gives up")
		}
		buf := make([]byte, 8)
		if w.Rank() == 0 {
			_, err := Recv(w, buf, AnySource, AnyTag)
			note("receive from any source after a failure", err)
			return err
		}
		_, err := Recv(w, buf, 2, 0)
		note("receive from a failed rank", err)
		err = Send(w, buf, 2, 0)
		note("send to a failed rank", err)
		return err
	})
	require.NotEmpty(t, errs)
	for what, err := range errs {
		checkWording(t, what, err)
	}
	t.Logf("%d errors checked", len(errs))
	for what, err := range errs {
		t.Logf("%s: %v", what, err)
	}
}
