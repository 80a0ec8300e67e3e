//go:build !js && !wasip1

package peer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

func TestFingerprintChecks(t *testing.T) {
	id, err := NewIdentity()
	require.NoError(t, err)
	fp := id.Fingerprint()
	require.True(t, ValidFingerprint(fp), fp)
	require.Regexp(t, `^sha-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}$`, fp)
	other, err := NewIdentity()
	require.NoError(t, err)
	require.NotEqual(t, fp, other.Fingerprint())

	for _, bad := range []string{"", "sha-256", "SHA-256 AB:CD", "sha-256 ab:cd", "sha-256 ABC:D", "sha-256 AB:CD ", "sha 256 AB", "sha-256 AB:XY"} {
		require.False(t, ValidFingerprint(bad), "%q", bad)
	}
	lower := "a=fingerprint:sha-256 " + toLowerHex(fp[len("sha-256 "):])
	for _, tc := range []struct {
		name, sdp string
		ok        bool
	}{
		{"the vouched one", "v=0\r\na=fingerprint:" + fp + "\r\n", true},
		{"lower case hex", "v=0\r\n" + lower + "\r\n", true},
		{"another certificate", "v=0\r\na=fingerprint:" + other.Fingerprint() + "\r\n", false},
		{"none", "v=0\r\n", false},
		{"the vouched one and another", "a=fingerprint:" + fp + "\r\na=fingerprint:" + other.Fingerprint() + "\r\n", false},
	} {
		err := checkFingerprint(tc.sdp, fp)
		if tc.ok {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorIs(t, err, ErrIdentity, tc.name)
		}
	}
}

func toLowerHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// A link connects only when each side presents the certificate the other
// was told to expect: a peer with another certificate is refused with
// ErrIdentity, on the side that checks, before any data flows.
func TestWebRTCIdentity(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) { testIdentity(t, native) })
	}
}

func testIdentity(t *testing.T, native bool) {
	leaktest.Check(t)
	a, err := NewIdentity()
	require.NoError(t, err)
	b, err := NewIdentity()
	require.NoError(t, err)
	impostor, err := NewIdentity()
	require.NoError(t, err)

	connect := func(dialer, acceptor WebRTCConfig) (dErr, aErr error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // hang guard
		defer cancel()
		sa, sb := newChanSignalers()
		var wg sync.WaitGroup
		var la, lb Link
		wg.Add(1)
		go func() {
			defer wg.Done()
			lb, aErr = AcceptWebRTC(ctx, acceptor, sb)
			if aErr != nil {
				cancel() // the dialer would wait for an answer otherwise
			}
		}()
		la, dErr = DialWebRTC(ctx, dialer, sa)
		if dErr != nil {
			cancel()
		}
		wg.Wait()
		for _, l := range []Link{la, lb} {
			if l != nil {
				l.Close()
			}
		}
		return dErr, aErr
	}
	cfg := func(id *Identity, remote string) WebRTCConfig {
		return WebRTCConfig{Loopback: true, Identity: id, RemoteFingerprint: remote, NativeRemote: native}
	}

	dErr, aErr := connect(cfg(a, b.Fingerprint()), cfg(b, a.Fingerprint()))
	require.NoError(t, dErr)
	require.NoError(t, aErr)

	// the dialer presents another certificate than the one vouched for it
	_, aErr = connect(cfg(impostor, b.Fingerprint()), cfg(b, a.Fingerprint()))
	require.ErrorIs(t, aErr, ErrIdentity)
	require.ErrorContains(t, aErr, impostor.Fingerprint())

	// the acceptor does
	dErr, _ = connect(cfg(a, b.Fingerprint()), cfg(impostor, a.Fingerprint()))
	require.ErrorIs(t, dErr, ErrIdentity)

	// without a certificate of its own a link gets a fresh one, which no
	// vouched fingerprint names
	_, aErr = connect(cfg(nil, b.Fingerprint()), cfg(b, a.Fingerprint()))
	require.ErrorIs(t, aErr, ErrIdentity)

	// a malformed expectation is a configuration error, not a check that
	// passes
	dErr, _ = connect(cfg(a, "sha-256 nonsense"), cfg(b, ""))
	require.ErrorContains(t, dErr, "remote fingerprint")
}
