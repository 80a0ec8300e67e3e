//go:build unix

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// childStats is a child server's GET /stats.
type childStats struct {
	HeapInuse  uint64        `json:"heap_inuse"`
	StackInuse uint64        `json:"stack_inuse"`
	RSS        uint64        `json:"rss"`
	Goroutines int           `json:"goroutines"`
	CPU        time.Duration `json:"cpu_ns"`
	CPUOK      bool          `json:"cpu_ok"`
	Conns      int           `json:"conns"`
	Ranks      int           `json:"ranks"`
	Joins      uint64        `json:"joins"`
	Departures uint64        `json:"departures"`
	Sent       uint64        `json:"sent"`
}

func (cs childStats) sample(gc bool) sample {
	return sample{
		heap: cs.HeapInuse, stack: cs.StackInuse, memOK: true, gcd: gc, rss: cs.RSS,
		cpu: cs.CPU, cpuOK: cs.CPUOK, goroutines: cs.Goroutines,
		conns: cs.Conns, ranks: cs.Ranks, joins: cs.Joins, departures: cs.Departures, sent: cs.Sent,
	}
}

// serveChild is a child server's main: package signaling's Server on a
// loopback port, whose address it prints as "listening http://ADDR",
// with GET /stats and /debug/pprof/ beside /ws, until its stdin closes
// (the generator closes it, or dies).
func serveChild(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("signalload server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	fs.IntVar(&cfg.maxJobSize, "max-job-size", 1024, "largest job")
	fs.DurationVar(&cfg.pingInterval, "ping-interval", 0, "ping period (default: the server's)")
	fs.DurationVar(&cfg.pingTimeout, "ping-timeout", 0, "pong wait (default: the server's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := signaling.NewServer(serverConfig(cfg, []byte(os.Getenv(envChildSecret))))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", srv)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		// CPU first: the GC the caller may ask for is the probe's cost,
		// not the load's
		var cs childStats
		cs.CPU, cs.CPUOK = selfCPU()
		if r.URL.Query().Get("gc") != "" {
			// a GC halves a parked goroutine's stack when it uses less
			// than a quarter of it: a few let stacks reach their size
			for range 4 {
				runtime.GC()
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		cs.HeapInuse, cs.StackInuse, cs.Goroutines, cs.RSS = ms.HeapInuse, ms.StackInuse, runtime.NumGoroutine(), selfRSS()
		st := srv.Stats()
		cs.Conns, cs.Ranks, cs.Joins, cs.Departures, cs.Sent = st.Conns, st.Ranks, st.Joins, st.Departures, st.Sent
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(cs)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	hs := signaling.NewHTTPServer(mux, 0)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, stdin) // until the generator closes it
	_ = srv.Close()
	_ = hs.Close()
	<-served
	return nil
}
