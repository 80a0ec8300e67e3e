//go:build !js

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pion/logging"
	pionturn "github.com/pion/turn/v5"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/turn"
)

// signal serve -turn runs STUN/TURN beside the signaling server: each rank
// is welcomed with its URLs and credentials of its own, which allocate a
// relay; an external TURN server given with -ice-secret gets per-rank
// credentials in the same scheme; /metrics counts the relay.
func TestServeTURN(t *testing.T) {
	const external = "0123456789abcdef-coturn"
	sc, err := parseServe([]string{"-secret", secret, "-log-level", "error", "-listen", "127.0.0.1:0",
		"-turn", "127.0.0.1:0", "-ice", "turn:192.0.2.9:3478?transport=udp", "-ice-secret", external}, io.Discard)
	require.NoError(t, err)
	require.Nil(t, sc.sig.ICEServers, "-ice-secret servers get per-rank credentials only")
	ts, err := sc.ice.start(&sc.sig, sc.listen)
	require.NoError(t, err)
	defer ts.Close()
	srv, err := signaling.NewServer(sc.sig)
	require.NoError(t, err)
	defer srv.Close()
	hs := httptest.NewServer(newHandler(srv, newRegistry(srv, ts, nil), nil, nil))
	defer hs.Close()

	tok, err := signaling.Mint([]byte(secret), signaling.Claims{Job: "j", Size: 2, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var users []string
	for rank := range 2 {
		c, err := signaling.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/ws", "j", tok, nil)
		require.NoError(t, err)
		defer c.Close()
		ice := c.Welcome().ICEServers
		require.Len(t, ice, 2)
		require.Equal(t, ts.URLs(), ice[0].URLs)
		require.True(t, strings.HasSuffix(ice[0].Username, ":j:"+string(rune('0'+rank))), ice[0].Username)
		users = append(users, ice[0].Username)
		require.Equal(t, []string{"turn:192.0.2.9:3478?transport=udp"}, ice[1].URLs)
		exp, _, _ := strings.Cut(ice[1].Username, ":")
		sec, err := time.ParseDuration(exp + "s")
		require.NoError(t, err)
		u, p := turn.Credentials([]byte(external), "j", rank, time.Unix(int64(sec.Seconds()), 0))
		require.Equal(t, u, ice[1].Username)
		require.Equal(t, p, ice[1].Credential)

		// the embedded server takes the rank's credentials
		conn, err := net.ListenPacket("udp4", "127.0.0.1:0")
		require.NoError(t, err)
		defer conn.Close()
		addr := strings.TrimPrefix(ice[0].URLs[0], "stun:")
		tc, err := pionturn.NewClient(&pionturn.ClientConfig{STUNServerAddr: addr, TURNServerAddr: addr, Conn: conn,
			Username: ice[0].Username, Password: ice[0].Credential, Realm: turn.DefaultRealm, LoggerFactory: logging.NewDefaultLoggerFactory()})
		require.NoError(t, err)
		defer tc.Close()
		require.NoError(t, tc.Listen())
		relay, err := tc.Allocate()
		require.NoError(t, err)
		defer relay.Close()
	}
	require.NotEqual(t, users[0], users[1], "credentials are per rank")

	resp, err := http.Get(hs.URL + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(body), "meshmpi_turn_allocations 2")
	require.Contains(t, string(body), "meshmpi_turn_relayed_bytes_total 0")
	http.DefaultClient.CloseIdleConnections()
}

func TestICEFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-ice-username", "u", "-ice-credential", "c"}, "need -ice"},
		{[]string{"-ice", "turn:h:3478", "-ice-username", "u"}, "go together"},
		{[]string{"-ice", "turn:h:3478", "-ice-secret", "short"}, "16 bytes"},
		{[]string{"-ice", "turn:h:3478", "-ice-secret", "0123456789abcdef", "-ice-username", "u", "-ice-credential", "c"}, "leave out"},
		{[]string{"-turn", ":3478", "-turn-ports", "9-"}, "MIN-MAX"},
		{[]string{"-turn", ":3478", "-turn-public-ip", "host.example"}, "not an IP"},
	} {
		_, err := parseServe(append([]string{"-secret", secret}, tc.args...), io.Discard)
		require.ErrorContains(t, err, tc.want, tc.args)
	}
	// static credentials reach every rank alike
	sc, err := parseServe([]string{"-secret", secret, "-ice", "turn:h:3478", "-ice-username", "u", "-ice-credential", "c"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []signaling.ICEServer{{URLs: []string{"turn:h:3478"}, Username: "u", Credential: "c"}}, sc.sig.ICEServers)
	// an unspecified -turn address without a public IP anywhere is an error at start
	sc, err = parseServe([]string{"-secret", secret, "-turn", "0.0.0.0:0", "-listen", "0.0.0.0:0"}, io.Discard)
	require.NoError(t, err)
	_, err = sc.ice.start(&sc.sig, sc.listen)
	require.ErrorContains(t, err, "public IP")
}
