package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/peer"
)

// TestReportOffered: under a host that offers the report messages the
// guest says report-ready, answers each report with its function, and
// carries on.
func TestReportOffered(t *testing.T) {
	t.Setenv(EnvOffers, "other,"+OfferReport)
	g, h := startGuest(t)
	asked := make(chan struct{}, 2)
	require.True(t, g.OnReport(func() { asked <- struct{}{} }))
	require.False(t, g.OnReport(func() {}), "a second OnReport")
	require.Equal(t, MsgReportReady, h.next().Type)
	h.send(AppendReport(AppendReport(nil)))
	<-asked
	<-asked
	go func() { _, _ = g.Lookup(context.Background(), "ocean") }() // the test's end ends it
	require.Equal(t, MsgName, h.next().Type, "the guest carries on")
}

// TestReportNotOffered: under a host that does not offer them (one built
// before them) the guest never says report-ready, and a report is a
// protocol error.
func TestReportNotOffered(t *testing.T) {
	t.Setenv(EnvOffers, "")
	g, h := startGuest(t)
	require.False(t, g.OnReport(func() { t.Error("answered a report it never offered to") }))
	res := make(chan error, 1)
	go func() {
		_, err := g.Lookup(context.Background(), "ocean")
		res <- err
	}()
	require.Equal(t, MsgName, h.next().Type, "the first message after the welcome")
	h.send(AppendReport(nil))
	err := <-res
	require.ErrorIs(t, err, peer.ErrProcFailed)
	require.ErrorIs(t, err, ErrProtocol)
	require.ErrorContains(t, err, "report request before report-ready")
}

func TestOffered(t *testing.T) {
	require.True(t, offered(Offers(), OfferReport))
	require.True(t, offered("a,report,b", OfferReport))
	require.False(t, offered("", OfferReport))
	require.False(t, offered("reports,repor", OfferReport))
}
