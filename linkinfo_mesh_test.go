//go:build !js && !wasip1

package meshmpi

import (
	"fmt"
	"testing"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/stretchr/testify/require"
)

// The ranks of a job that live in one process (Run WithJob) link in
// memory, not over WebRTC; a job with link=webrtc keeps WebRTC.
func TestLinkInfoJobInOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("jobs in -short mode")
	}
	leaktest.Check(t)
	for _, tc := range []struct {
		link, want string
	}{{"auto", "memory"}, {"", "memory"}, {"webrtc", "webrtc"}} {
		t.Run(tc.link, func(t *testing.T) {
			spec := localJobs(t, map[string]string{SettingLink: tc.link})(t, 3)
			err := Run(3, func(w *Comm) error {
				if err := Barrier(w); err != nil { // every pair has talked
					return err
				}
				for r := range w.Size() {
					if r == w.Rank() {
						continue
					}
					li, err := w.LinkInfo(r)
					if err != nil {
						return err
					}
					if li.Link != tc.want {
						return fmt.Errorf("rank %d: link to %d: %+v, want %s", w.Rank(), r, li, tc.want)
					}
				}
				buf := make([]byte, 3<<20) // larger than a frame of either link
				for i := range buf {
					buf[i] = byte(i * 7)
				}
				got := make([]byte, len(buf))
				if w.Rank() == 0 {
					if _, err := Recv(w, got, 2, 5); err != nil {
						return err
					}
					if string(got) != string(buf) {
						return fmt.Errorf("rank 0 got other bytes than rank 2 sent")
					}
				}
				if w.Rank() == 2 {
					return Send(w, buf, 0, 5)
				}
				return nil
			}, WithJob(spec))
			require.NoError(t, err)
		})
	}
}
