package meshmpi

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// LinkInfo names the link to every rank after it carried a message: memory
// links in-process, WebRTC host-to-host pairs over loopback (the mesh
// test), "self" for the calling rank; bad ranks are ErrRank.
func TestLinkInfo(t *testing.T) {
	overWebRTC := worldJob != nil
	world(t, 3, func(w *Comm) error {
		if err := Barrier(w); err != nil { // every pair has talked
			return err
		}
		for r := range w.Size() {
			li, err := w.LinkInfo(r)
			if err != nil {
				return err
			}
			switch {
			case r == w.Rank():
				if li.Link != "self" {
					return fmt.Errorf("rank %d: link to itself %+v", w.Rank(), li)
				}
			case overWebRTC:
				if li.Link != "webrtc" || li.Local != "host" || li.Remote != "host" || li.Relayed() || li.LocalAddr == "" || li.RemoteAddr == "" {
					return fmt.Errorf("rank %d: link to %d: %+v", w.Rank(), r, li)
				}
			default:
				if li.Link != "memory" || li.Local != "" {
					return fmt.Errorf("rank %d: link to %d: %+v", w.Rank(), r, li)
				}
			}
		}
		for _, bad := range []int{-1, w.Size(), ProcNull, AnySource} {
			if _, err := w.LinkInfo(bad); !errors.Is(err, ErrRank) {
				return fmt.Errorf("LinkInfo(%d): %v, want ErrRank", bad, err)
			}
		}
		return nil
	})
	var freed *Comm
	_, err := freed.LinkInfo(0)
	require.ErrorIs(t, err, ErrComm)
}
