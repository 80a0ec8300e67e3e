package signaling

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hangGuard bounds every wait in these tests; reaching it is a failure, not a
// timing assertion.
const hangGuard = 10 * time.Second

func dial(t *testing.T, url, job, tok string, opts *DialOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	// the tests that compare whole Readys announce no host unless they
	// say so (TestReadyPassesHosts covers the default)
	o := DialOptions{Host: "-"}
	if opts != nil {
		o = *opts
		if o.Host == "" {
			o.Host = "-"
		}
	}
	c, err := Dial(ctx, url, job, tok, &o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// recv returns the next message, failing on a closed channel or the guard.
func recv(t *testing.T, c *Client) Message {
	t.Helper()
	select {
	case m, ok := <-c.Messages():
		require.True(t, ok, "connection ended: %v", c.Err())
		return m
	case <-time.After(hangGuard):
		t.Fatal("no message before the hang guard")
		return nil
	}
}

func recvAs[T Message](t *testing.T, c *Client) T {
	t.Helper()
	m := recv(t, c)
	v, ok := m.(T)
	require.True(t, ok, "got %T %+v", m, m)
	return v
}

// expectClosedWith drains c until its channel closes and checks that the last
// error message had the code.
func expectClosedWith(t *testing.T, c *Client, code ErrorCode) {
	t.Helper()
	var last *Error
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-c.Messages():
			if !ok {
				require.NotNil(t, last, "closed without an error message: %v", c.Err())
				require.Equal(t, code, last.Code, last.Message)
				var re *RemoteError
				require.ErrorAs(t, c.Err(), &re)
				require.Equal(t, code, re.Code)
				return
			}
			if e, ok := m.(*Error); ok {
				last = e
			}
		case <-timer.C:
			t.Fatal("connection not closed before the hang guard")
		}
	}
}

// The browser tests (client_js_test.go) reach the native side that
// TestClientInBrowser (client_browser_test.go) starts through these
// variables, which cmd/jsrun passes to the page.
const (
	envJSServer  = "MESHMPI_SIGNALING_TEST_SERVER"  // ws://host:port of the test server
	envJSToken   = "MESHMPI_SIGNALING_TEST_TOKEN"   // token of jsRelayJob
	envJSSolo    = "MESHMPI_SIGNALING_TEST_SOLO"    // token of jsSoloJob
	envJSSilent  = "MESHMPI_SIGNALING_TEST_SILENT"  // URL of a port that never answers
	envJSRefused = "MESHMPI_SIGNALING_TEST_REFUSED" // URL of a port that refuses connections
	envJSGrow    = "MESHMPI_SIGNALING_TEST_GROW"    // open token of jsGrowJob
)

// Jobs of the browser tests: in jsRelayJob (size 2) a native rank 0
// answers every signal of rank 1 with the same payload; jsSoloJob has
// size 1; jsGrowJob has size 1 and may grow to 3.
const (
	jsRelayJob = "js-relay"
	jsSoloJob  = "js-solo"
	jsGrowJob  = "js-grow"
)

// Paths of the browser test server that misbehave on purpose: each reads
// the join, then sends a binary message or a text message over the size
// limit instead of a welcome.
const (
	pathBinary = "/binary"
	pathHuge   = "/huge"
)
