//go:build js && wasm

package peer

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two of the page's RTCPeerConnections linked to each other: the browser
// link's ICE restart (createOffer with iceRestart, the state events that
// start it) heals a link the way the native one does.
func TestJSLinkICERestart(t *testing.T) {
	for _, offererNotices := range []bool{true, false} {
		la, lb := connectLinks(t, WebRTCConfig{})
		a, b := la.(*jsLink), lb.(*jsLink)
		before := [2]string{jsUfrag(t, a), jsUfrag(t, b)}

		ea, err := NewEndpoint(Config{Rank: 0, Size: 2})
		require.NoError(t, err)
		eb, err := NewEndpoint(Config{Rank: 1, Size: 2})
		require.NoError(t, err)
		require.NoError(t, ea.Attach(1, a))
		require.NoError(t, eb.Attach(0, b))

		big := pattern(4<<20, 5)
		dst := make([]byte, len(big))
		s, r := ea.GetOp(), eb.GetOp()
		require.NoError(t, eb.StartRecv(r, 0, 0, 4, dst))
		require.NoError(t, ea.StartSend(s, Standard, 1, 0, 4, big))
		if offererNotices {
			a.setup.iceState("disconnected")
		} else {
			b.setup.iceState("disconnected")
		}
		for _, op := range []*Op{s, r} {
			<-op.Done()
			require.NoError(t, op.Result().Err)
		}
		require.True(t, bytes.Equal(big, dst))
		for a.setup.restartCount() < 1 || b.setup.restartCount() < 1 || a.pc.Get("signalingState").String() != "stable" {
			time.Sleep(10 * time.Millisecond)
		}
		require.NotEqual(t, before[0], jsUfrag(t, a))
		require.NotEqual(t, before[1], jsUfrag(t, b))

		// the link carries the next message over the new pair
		msg, got := pattern(70_000, 9), make([]byte, 70_000)
		s, r = eb.GetOp(), ea.GetOp()
		require.NoError(t, ea.StartRecv(r, 1, 0, 6, got))
		require.NoError(t, eb.StartSend(s, Standard, 0, 0, 6, msg))
		<-r.Done()
		require.NoError(t, r.Result().Err)
		require.Equal(t, msg, got)
		ea.Close(nil)
		eb.Close(nil)
	}
}

// jsUfrag is the ICE username fragment of l's current local description.
func jsUfrag(t *testing.T, l *jsLink) string {
	d := l.pc.Get("localDescription")
	require.True(t, d.Truthy())
	for _, line := range strings.Split(d.Get("sdp").String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "a=ice-ufrag:"); ok {
			return v
		}
	}
	t.Fatalf("no ice-ufrag in the local description")
	return ""
}
