package natsbus

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedOptions configure a NATS server run inside the signaling
// server's process (`signal serve --nats-embedded`): one binary per
// machine, clustering with the other machines' through routes.
type EmbeddedOptions struct {
	// Name names the node in the NATS cluster (default: its client
	// address).
	Name string
	// Listen is the client address, host:port (default 127.0.0.1:4222;
	// port 0 picks a free one).
	Listen string
	// ClusterListen is the route address other nodes connect to,
	// host:port; empty runs a single node.
	ClusterListen string
	// Routes are the other nodes' route URLs (nats-route://host:port).
	Routes []string
	// StoreDir holds JetStream's files (default: a new temporary
	// directory, removed by Shutdown).
	StoreDir string
	// Log sends the NATS server's own log to stderr.
	Log bool
}

// Embedded is a NATS server with JetStream, running in this process.
type Embedded struct {
	srv      *server.Server
	tempDir  string
	clientAt string
}

// StartEmbedded starts a NATS server and waits until it takes
// connections (and, in a cluster, JetStream is ready enough to answer).
func StartEmbedded(o EmbeddedOptions) (*Embedded, error) {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:4222"
	}
	host, port, err := splitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("natsbus: listen %q: %w", o.Listen, err)
	}
	e := &Embedded{}
	if o.StoreDir == "" {
		if o.StoreDir, err = os.MkdirTemp("", "meshmpi-nats-*"); err != nil {
			return nil, fmt.Errorf("natsbus: %w", err)
		}
		e.tempDir = o.StoreDir
	}
	opts := &server.Options{
		ServerName: o.Name, Host: host, Port: port, JetStream: true, StoreDir: o.StoreDir,
		NoLog: !o.Log, NoSigs: true,
	}
	if o.ClusterListen != "" {
		ch, cp, err := splitHostPort(o.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: cluster listen %q: %w", o.ClusterListen, err)
		}
		opts.Cluster = server.ClusterOpts{Name: "meshmpi", Host: ch, Port: cp}
		for _, r := range o.Routes {
			opts.Routes = append(opts.Routes, server.RoutesFromStr(r)...)
		}
		if opts.ServerName == "" {
			// a JetStream cluster names its peers: one per route address
			opts.ServerName = "meshmpi-" + strings.NewReplacer(":", "-", ".", "-", "[", "", "]", "").Replace(o.ClusterListen)
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		e.cleanup()
		return nil, fmt.Errorf("natsbus: embedded NATS: %w", err)
	}
	if o.Log {
		srv.ConfigureLogger()
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		e.cleanup()
		return nil, fmt.Errorf("natsbus: embedded NATS at %s did not start", o.Listen)
	}
	e.srv, e.clientAt = srv, srv.ClientURL()
	return e, nil
}

// URL is the server's client URL (nats://host:port).
func (e *Embedded) URL() string { return e.clientAt }

// Shutdown stops the server and removes its temporary store.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
	e.cleanup()
}

func (e *Embedded) cleanup() {
	if e.tempDir != "" {
		_ = os.RemoveAll(e.tempDir)
	}
}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	if n == 0 {
		n = server.RANDOM_PORT // NATS takes 0 for its default port
	}
	return h, n, nil
}
