package main

import "github.com/meshmpi/meshmpi"

// links makes the worlds the benchmarks run in: in-process worlds over
// memory links, or whole jobs over WebRTC data channels on loopback, set
// up through the embedded signaling server. Only world creation differs;
// the benchmark bodies are the same.
type links struct {
	name string
	jobs *jobServer // webrtc; nil for memory links
}

// run runs fn on every rank of a fresh n-rank world.
func (l *links) run(n int, fn func(*meshmpi.Comm) error) error {
	if l.jobs == nil {
		return meshmpi.Run(n, fn)
	}
	spec, err := l.jobs.spec(n)
	if err != nil {
		return err
	}
	return meshmpi.Run(n, fn, meshmpi.WithJob(spec))
}
