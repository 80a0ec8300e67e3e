//go:build !js

package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/turn"
)

// iceConfig is what signal serve tells ranks about ICE servers: the
// embedded STUN/TURN server's (turn), and external ones (-ice) with static
// credentials or per-rank credentials minted with a coturn's
// static-auth-secret.
type iceConfig struct {
	turn *turn.Config // nil: no embedded server

	urls               []string // -ice
	username, password string   // -ice-username, -ice-credential
	secret             []byte   // -ice-secret: TURN REST credentials per rank
}

// addICEFlags declares the ICE flags; finish turns them into an
// iceConfig once the flags are parsed.
func addICEFlags(f *flagSet) (finish func() (iceConfig, error)) {
	ice := f.str("ice", "", "comma-separated external ICE server URLs sent to ranks (stun:host:port, turn:host:port?transport=udp, ...)")
	iceUser := f.str("ice-username", "", "username for the -ice TURN servers (static credentials)")
	iceCred := f.str("ice-credential", "", "credential for the -ice TURN servers (static credentials)")
	iceSecret := f.str("ice-secret", "", "the -ice TURN servers' shared secret (coturn's static-auth-secret): each rank gets credentials of its own that expire with its job's token")
	listen := f.str("turn", "", "run the embedded STUN/TURN server on this host:port, UDP and TCP (e.g. :3478); ranks get its URLs and credentials of their own")
	public := f.str("turn-public-ip", "", "the address ranks reach the embedded TURN server at (default: -turn's host, or -listen's)")
	ports := f.str("turn-ports", fmt.Sprintf("%d-%d", turn.DefaultMinPort, turn.DefaultMaxPort), "relay port range of the embedded TURN server, MIN-MAX (bounds its allocations)")
	jobQuota := f.int("turn-job-quota", turn.DefaultJobQuota, "relay allocations one job may hold at once")
	rankQuota := f.int("turn-rank-quota", turn.DefaultRankQuota, "relay allocations one rank may hold at once")
	turnSecret := f.str("turn-secret", "", "secret of the embedded TURN server's credentials, at least 16 bytes (default: random at start; set it to share the server with a coturn or other signaling servers)")
	return func() (iceConfig, error) {
		c := iceConfig{urls: splitList(*ice), username: *iceUser, password: *iceCred, secret: []byte(*iceSecret)}
		if (c.username != "" || c.password != "" || len(c.secret) > 0) && len(c.urls) == 0 {
			return c, errors.New("-ice-username, -ice-credential and -ice-secret need -ice")
		}
		if len(c.secret) > 0 && (c.username != "" || c.password != "") {
			return c, errors.New("-ice-secret mints credentials: leave out -ice-username and -ice-credential")
		}
		if (c.username == "") != (c.password == "") {
			return c, errors.New("-ice-username and -ice-credential go together")
		}
		if n := len(c.secret); n > 0 && n < 16 {
			return c, errors.New("-ice-secret needs at least 16 bytes")
		}
		if *listen == "" {
			return c, nil
		}
		tc := turn.Config{Listen: *listen, JobQuota: *jobQuota, RankQuota: *rankQuota, Secret: []byte(*turnSecret)}
		if *public != "" {
			if tc.PublicIP = net.ParseIP(*public); tc.PublicIP == nil {
				return c, fmt.Errorf("-turn-public-ip %q is not an IP address", *public)
			}
		}
		lo, hi, ok := strings.Cut(*ports, "-")
		var err1, err2 error
		tc.MinPort, err1 = strconv.Atoi(lo)
		tc.MaxPort, err2 = strconv.Atoi(hi)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("-turn-ports %q: want MIN-MAX", *ports)
		}
		if len(tc.Secret) == 0 {
			tc.Secret = []byte(rand.Text())
		}
		c.turn = &tc
		return c, nil
	}
}

// static is the ICE servers every rank gets alike: the -ice ones, unless
// each rank gets credentials of its own for them.
func (c iceConfig) static() []signaling.ICEServer {
	if len(c.urls) == 0 || len(c.secret) > 0 {
		return nil
	}
	return []signaling.ICEServer{{URLs: c.urls, Username: c.username, Credential: c.password}}
}

// start starts the embedded TURN server, if any, and gives cfg's ranks
// credentials of their own for it and for the -ice servers that take
// them (-ice-secret). It returns the server to close, nil if none.
// listen is the signaling server's address, whose host stands in for the
// TURN server's when neither -turn nor -turn-public-ip names one.
func (c iceConfig) start(cfg *signaling.Config, listen string) (*turn.Server, error) {
	var ts *turn.Server
	if c.turn != nil {
		tc := *c.turn
		tc.Logger = cfg.Logger
		if tc.PublicIP == nil {
			host, _, _ := net.SplitHostPort(tc.Listen)
			if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
				lh, _, _ := net.SplitHostPort(listen)
				if ip := net.ParseIP(lh); ip != nil && !ip.IsUnspecified() {
					tc.PublicIP = ip
				}
			}
		}
		var err error
		if ts, err = turn.Listen(tc); err != nil {
			return nil, fmt.Errorf("-turn: %w", err)
		}
		cfg.Logger.Info("STUN/TURN server listening", "urls", ts.URLs(), "ports", fmt.Sprintf("%d-%d", tc.MinPort, tc.MaxPort))
	}
	if ts == nil && len(c.secret) == 0 {
		return nil, nil
	}
	external := c
	cfg.ICECredentials = func(job string, rank int, expires time.Time) []signaling.ICEServer {
		var out []signaling.ICEServer
		if ts != nil {
			u, p := ts.Credentials(job, rank, expires)
			out = append(out, signaling.ICEServer{URLs: ts.URLs(), Username: u, Credential: p})
		}
		if len(external.secret) > 0 {
			u, p := turn.Credentials(external.secret, job, rank, expires)
			out = append(out, signaling.ICEServer{URLs: external.urls, Username: u, Credential: p})
		}
		return out
	}
	return ts, nil
}

// turnCollector exports the embedded TURN server's counters.
type turnCollector struct {
	ts                                        *turn.Server
	allocations, allocated, refused, authFail *prometheus.Desc
	relayed                                   *prometheus.Desc
}

func newTURNCollector(ts *turn.Server) *turnCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("meshmpi_turn_"+name, help, nil, nil)
	}
	return &turnCollector{
		ts:          ts,
		allocations: d("allocations", "Relay allocations open now."),
		allocated:   d("allocations_total", "Relay allocations made."),
		refused:     d("refused_total", "Relay allocations refused by a rank's or a job's quota."),
		authFail:    d("auth_failures_total", "TURN requests with bad, expired or foreign credentials."),
		relayed:     d("relayed_bytes_total", "Bytes relayed, both directions."),
	}
}

func (c *turnCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.allocations, c.allocated, c.refused, c.authFail, c.relayed} {
		ch <- d
	}
}

func (c *turnCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.ts.Stats()
	ch <- prometheus.MustNewConstMetric(c.allocations, prometheus.GaugeValue, float64(st.Allocations))
	ch <- prometheus.MustNewConstMetric(c.allocated, prometheus.CounterValue, float64(st.Allocated))
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.Refused))
	ch <- prometheus.MustNewConstMetric(c.authFail, prometheus.CounterValue, float64(st.AuthFailed))
	ch <- prometheus.MustNewConstMetric(c.relayed, prometheus.CounterValue, float64(st.Relayed))
}
