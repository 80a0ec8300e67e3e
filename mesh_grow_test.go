//go:build !js && !wasip1

package meshmpi

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi/internal/leaktest"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/stretchr/testify/require"
)

// growOver joins a job of first ranks that may grow to n over a real
// signaling server and WebRTC mesh; ranks first…n-1 join late, one after
// another, and connect through the published port, then every rank runs
// fn on the grown communicator and finalizes.
func growOver(t *testing.T, first, n int, fn func(world, grown *Comm) error) {
	t.Helper()
	srv, err := signaling.ListenLocal(signaling.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	settings := map[string]string{SettingNetwork: "loopback"}
	exp := time.Now().Add(time.Hour).Unix()
	seats, err := srv.MintSeats(signaling.Claims{Job: "grow", Size: first, Max: n, Settings: settings, Expires: exp})
	require.NoError(t, err)
	late, err := srv.Mint(signaling.Claims{Job: "grow", Size: first, Max: n, Late: true, Settings: settings, Expires: exp})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// each late rank may connect once the one before it is in
	turns := make([]chan struct{}, n+1)
	for i := range turns {
		turns[i] = make(chan struct{})
	}
	close(turns[first])
	var wg sync.WaitGroup
	errs := make([]error, n)
	rank := func(i int) {
		defer wg.Done()
		tok := late
		if i < first {
			tok = seats[i]
		}
		s, err := Join(ctx, JobSpec{Signal: srv.URL(), Job: "grow", Token: tok, Rank: AnyRank})
		if err != nil {
			errs[i] = err
			return
		}
		errs[i] = func() error {
			world := s.World()
			if world.Late() != (i >= first) {
				return fmt.Errorf("Late() = %v", world.Late())
			}
			comm := world
			var port string
			if i == 0 {
				if port, err = world.OpenPort(); err != nil {
					return err
				}
				if err := world.PublishName("grow", port); err != nil {
					return err
				}
			}
			if world.Late() {
				if world.Size() != 1 {
					return fmt.Errorf("a late rank's world has %d ranks", world.Size())
				}
				<-turns[i]
				p, err := world.LookupName(ctx, "grow")
				if err != nil {
					return err
				}
				inter, err := world.Connect(p, 0)
				if err != nil {
					return err
				}
				if comm, err = inter.IntercommMerge(true); err != nil {
					return err
				}
				close(turns[i+1])
			}
			for comm.Size() < n {
				inter, err := comm.Accept(port, 0)
				if err != nil {
					return err
				}
				if comm, err = inter.IntercommMerge(false); err != nil {
					return err
				}
			}
			return fn(world, comm)
		}()
		if err := s.Finalize(); errs[i] == nil {
			errs[i] = err
		}
	}
	// late ranks start with the others: until the job formed the server
	// refuses them (not-formed) and Join tries again
	for i := range n {
		wg.Add(1)
		go rank(i)
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "rank %d", i)
	}
}

// TestMeshGrow: a job of 4 grows to 8 while it runs, over WebRTC; the
// late ranks take part in collectives on the merged communicator.
func TestMeshGrow(t *testing.T) {
	leaktest.Check(t)
	overMesh(t)
	const first, n = 4, 8
	growOver(t, first, n, func(world, grown *Comm) error {
		me := grown.Rank()
		sum := make([]int64, 1)
		if err := Allreduce(grown, []int64{int64(me + 1)}, sum, Sum); err != nil {
			return err
		}
		if sum[0] != n*(n+1)/2 {
			return fmt.Errorf("allreduce: %d", sum[0])
		}
		all := make([]int32, n)
		if err := Allgather(grown, []int32{int32(me)}, all); err != nil {
			return err
		}
		for i, v := range all {
			if v != int32(i) {
				return fmt.Errorf("allgather: %v", all)
			}
		}
		b := []float64{0}
		if me == n-1 {
			b[0] = 2.5
		}
		if err := Bcast(grown, b, n-1); err != nil {
			return err
		}
		if b[0] != 2.5 {
			return fmt.Errorf("bcast from the last late rank: %v", b)
		}
		return grown.Disconnect()
	})
}
