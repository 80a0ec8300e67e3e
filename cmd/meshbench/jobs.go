//go:build !js && !wasip1

package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/signaling"
)

// jobServer is an embedded signaling server on loopback that mints a fresh
// job for every world.
type jobServer struct {
	srv *signaling.Local
	seq atomic.Int64
}

func startJobServer() (*jobServer, error) {
	srv, err := signaling.ListenLocal(signaling.Config{})
	if err != nil {
		return nil, fmt.Errorf("signaling server: %w", err)
	}
	return &jobServer{srv: srv}, nil
}

// spec returns a new job of n ranks in loopback ICE mode.
func (j *jobServer) spec(n int) (meshmpi.JobSpec, error) {
	job := fmt.Sprintf("meshbench-%d", j.seq.Add(1))
	// link=webrtc: the job's ranks share this process, which would link
	// them in memory
	tok, err := j.srv.Token(job, n, map[string]string{meshmpi.SettingNetwork: "loopback", meshmpi.SettingLink: "webrtc"}, time.Hour)
	if err != nil {
		return meshmpi.JobSpec{}, fmt.Errorf("job token: %w", err)
	}
	return meshmpi.JobSpec{Signal: j.srv.URL(), Job: job, Token: tok, Rank: meshmpi.AnyRank}, nil
}

func (j *jobServer) close() error { return j.srv.Close() }
