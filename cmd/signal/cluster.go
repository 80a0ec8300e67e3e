//go:build !js

package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/meshmpi/meshmpi/signaling/natsbus"
	"github.com/prometheus/client_golang/prometheus"
)

// clusterConfig is how a server joins a cluster of signaling servers
// (-nats, -nats-embedded and the flags beside them).
type clusterConfig struct {
	url           string // -nats
	embedded      bool   // -nats-embedded
	listen        string // the embedded NATS server's client address
	clusterListen string // its route address; "" for a single node
	routes        string // the other nodes' routes, comma-separated
	storeDir      string
	replicas      int
	prefix        string
	timeout       time.Duration
	resumeGrace   time.Duration
}

// cluster is a server's NATS side: its bus, and the NATS server it runs
// itself (-nats-embedded).
type cluster struct {
	bus  *natsbus.Bus
	nats *natsbus.Embedded // nil with -nats
}

// startCluster connects the bus cc asks for; nil without -nats and
// -nats-embedded.
func startCluster(ctx context.Context, cc clusterConfig, log *slog.Logger) (*cluster, error) {
	if cc.url == "" && !cc.embedded {
		return nil, nil
	}
	c := &cluster{}
	url := cc.url
	if cc.embedded {
		var err error
		c.nats, err = natsbus.StartEmbedded(natsbus.EmbeddedOptions{
			Listen: cc.listen, ClusterListen: cc.clusterListen, Routes: splitList(cc.routes), StoreDir: cc.storeDir})
		if err != nil {
			return nil, err
		}
		url = c.nats.URL()
		log.Info("embedded NATS server", "url", url, "cluster", cc.clusterListen, "routes", cc.routes)
	}
	// a NATS cluster elects its JetStream leaders after its routes
	// connect: New waits for them, up to a minute
	bctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var err error
	c.bus, err = natsbus.New(bctx, natsbus.Options{URL: url, Prefix: cc.prefix, Replicas: cc.replicas, Timeout: cc.timeout, Logger: log})
	if err != nil {
		c.close()
		return nil, err
	}
	log.Info("signaling cluster joined", "server", c.bus.ID(), "nats", url)
	return c, nil
}

func (c *cluster) close() {
	if c.bus != nil {
		_ = c.bus.Close()
	}
	if c.nats != nil {
		c.nats.Shutdown()
	}
}

// clusterCollector exports the cluster's view: its live servers, its
// jobs, and whether this server reaches NATS.
type clusterCollector struct {
	bus                  *natsbus.Bus
	servers, jobs, ready *prometheus.Desc
}

func newClusterCollector(bus *natsbus.Bus) *clusterCollector {
	return &clusterCollector{
		bus:     bus,
		servers: prometheus.NewDesc("meshmpi_signal_cluster_servers", "Live signaling servers of the cluster, this one included.", nil, nil),
		jobs:    prometheus.NewDesc("meshmpi_signal_cluster_jobs", "Jobs the whole cluster serves.", nil, nil),
		ready:   prometheus.NewDesc("meshmpi_signal_cluster_nats_up", "1 when this server reaches NATS.", nil, nil),
	}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.servers
	ch <- c.jobs
	ch <- c.ready
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	up := 1.0
	if c.bus.Healthy() != nil {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(c.servers, prometheus.GaugeValue, float64(c.bus.Servers()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if n, err := c.bus.Jobs(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n))
	}
}
