//go:build !js && !wasip1

package meshmpi

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/signaling"
)

// BenchmarkTelemetry is the same-run A/B of telemetry off and on: 8-byte
// Allreduce and ping-pong, in-process (memory links; with telemetry on,
// each rank's recorder is drained every 250 ms as its reporter would)
// and over the WebRTC mesh on loopback (a real signaling server and
// reporter, telemetry=1). Compare with
//
//	go test -run '^$' -bench Telemetry -count 10 . | tee t.txt
//	benchstat -col /telemetry t.txt
//
// The signaling server runs in the benchmark's process, where its work
// on the reports counts too, unless MESHMPI_BENCH_SIGNAL names one
// (ws://host:port/ws) and MESHMPI_BENCH_SECRET its token secret (signal
// serve in a process of its own).
func BenchmarkTelemetry(b *testing.B) {
	url, secret := os.Getenv("MESHMPI_BENCH_SIGNAL"), os.Getenv("MESHMPI_BENCH_SECRET")
	mint := func(c signaling.Claims) (string, error) { return signaling.Mint([]byte(secret), c) }
	if url == "" {
		srv, err := signaling.ListenLocal(signaling.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		url, mint = srv.URL(), srv.Mint
	}
	jobs := 0
	job := func(b *testing.B, n int, on bool) JobSpec {
		jobs++
		settings := map[string]string{SettingNetwork: "loopback", SettingTelemetry: "0"}
		if on {
			settings[SettingTelemetry] = "1"
		}
		id := fmt.Sprintf("bench-telemetry-%d-%d", time.Now().UnixNano(), jobs)
		tok, err := mint(signaling.Claims{Job: id, Size: n, Expires: time.Now().Add(time.Hour).Unix(), Settings: settings})
		if err != nil {
			b.Fatal(err)
		}
		return JobSpec{Signal: url, Job: id, Token: tok}
	}
	for _, link := range []string{"memory", "webrtc"} {
		for _, op := range []string{"allreduce", "pingpong"} {
			for _, tel := range []string{"off", "on"} {
				b.Run(fmt.Sprintf("link=%s/op=%s-8B/telemetry=%s", link, op, tel), func(b *testing.B) {
					on := tel == "on"
					n := 2
					var opts []Option
					switch {
					case link == "webrtc":
						opts = append(opts, WithJob(job(b, n, on)))
					case on:
						opts = append(opts, withTelemetry(DefaultTelemetryOps))
					}
					benchTelemetryOp(b, n, op, link == "memory" && on, opts)
				})
			}
		}
	}
}

// benchTelemetryOp times b.N 8-byte Allreduces, or ping-pong round trips
// between ranks 0 and 1, on n ranks; drain drains each rank's recorder
// every DefaultTelemetryInterval (a world without a reporter).
func benchTelemetryOp(b *testing.B, n int, op string, drain bool, opts []Option) {
	b.ReportAllocs()
	err := Run(n, func(w *Comm) error {
		if drain {
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				t := time.NewTicker(DefaultTelemetryInterval)
				defer t.Stop()
				for {
					select {
					case <-t.C:
						recs, _ := w.p.rec.take()
						w.p.rec.done(recs)
					case <-stop:
						return
					}
				}
			}()
		}
		if op == "allreduce" {
			in, out := []float64{1}, []float64{0}
			return timeLoop(b, w, func() error { return Allreduce(w, in, out, Sum) })
		}
		buf := make([]byte, 8)
		other := 1 - w.Rank()
		send := func() error { return Send(w, buf, other, 0) }
		recv := func() error {
			_, err := Recv(w, buf, other, 0)
			return err
		}
		return timeLoop(b, w, roundTrip(w, send, recv))
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
}
