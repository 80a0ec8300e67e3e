//go:build !js

package signaling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// expectName reads c's next message, which must be the Name want; a
// failure's Message is checked to be there, not its words.
func expectName(t *testing.T, c *Client, want Name) {
	t.Helper()
	got := *recvAs[*Name](t, c)
	if want.Code != "" {
		require.NotEmpty(t, got.Message, "%+v", got)
		got.Message = ""
	}
	require.Equal(t, want, got)
}

// quiet proves that no message waits for the clients: the server answers
// a ping after everything it queued before it.
func quiet(t *testing.T, cs ...*Client) {
	t.Helper()
	for i, c := range cs {
		id := uint64(1000 + i)
		require.NoError(t, c.Send(context.Background(), &Ping{ID: id}))
		require.Equal(t, id, recvAs[*Pong](t, c).ID)
	}
}

// nameAnswer is a Name that rank is to receive.
type nameAnswer struct {
	rank int
	name Name
}

// nameStep is one request of a rank and the answers it causes, to any
// rank (none: the request waits).
type nameStep struct {
	rank int
	send Message
	want []nameAnswer
}

func (s nameStep) run(t *testing.T, cs []*Client) {
	t.Helper()
	require.NoError(t, cs[s.rank].Send(context.Background(), s.send))
	for _, a := range s.want {
		expectName(t, cs[a.rank], a.name)
	}
}

func okPublish(rank int, service string) nameAnswer {
	return nameAnswer{rank, Name{Op: TypePublish, Service: service}}
}

func found(rank int, service, port string) nameAnswer {
	return nameAnswer{rank, Name{Op: TypeLookup, Service: service, Port: port}}
}

func failed(rank int, op Type, service string, code ErrorCode) nameAnswer {
	return nameAnswer{rank, Name{Op: op, Service: service, Code: code}}
}

// The name service: a port published by one rank is found by the others,
// any rank removes it, a second publish of a service is name-taken, an
// unknown one name-unknown, and a lookup that waits is answered by the
// publish that comes later, each request by exactly one answer.
func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []nameStep
	}{
		{"publish, lookup, unpublish", []nameStep{
			{0, &Publish{Service: "ocean", Port: "port-0"}, []nameAnswer{okPublish(0, "ocean")}},
			{1, &Lookup{Service: "ocean"}, []nameAnswer{found(1, "ocean", "port-0")}},
			{0, &Lookup{Service: "ocean"}, []nameAnswer{found(0, "ocean", "port-0")}},
			{2, &Lookup{Service: "ocean", Wait: true}, []nameAnswer{found(2, "ocean", "port-0")}}, // published: at once
			{2, &Unpublish{Service: "ocean"}, []nameAnswer{{2, Name{Op: TypeUnpublish, Service: "ocean"}}}},
			{1, &Lookup{Service: "ocean"}, []nameAnswer{failed(1, TypeLookup, "ocean", CodeNameUnknown)}},
			{1, &Publish{Service: "ocean", Port: "port-1"}, []nameAnswer{okPublish(1, "ocean")}}, // free again
			{0, &Lookup{Service: "ocean"}, []nameAnswer{found(0, "ocean", "port-1")}},
		}},
		{"name-taken", []nameStep{
			{0, &Publish{Service: "a", Port: "p"}, []nameAnswer{okPublish(0, "a")}},
			{1, &Publish{Service: "a", Port: "q"}, []nameAnswer{failed(1, TypePublish, "a", CodeNameTaken)}},
			{0, &Publish{Service: "a", Port: "p"}, []nameAnswer{failed(0, TypePublish, "a", CodeNameTaken)}},
			{2, &Lookup{Service: "a"}, []nameAnswer{found(2, "a", "p")}}, // the first name stays
		}},
		{"name-unknown", []nameStep{
			{1, &Lookup{Service: "nope"}, []nameAnswer{failed(1, TypeLookup, "nope", CodeNameUnknown)}},
			{2, &Unpublish{Service: "nope"}, []nameAnswer{failed(2, TypeUnpublish, "nope", CodeNameUnknown)}},
			{0, &Publish{Service: "x", Port: "p"}, []nameAnswer{okPublish(0, "x")}},
			{0, &Unpublish{Service: "x"}, []nameAnswer{{0, Name{Op: TypeUnpublish, Service: "x"}}}},
			{0, &Unpublish{Service: "x"}, []nameAnswer{failed(0, TypeUnpublish, "x", CodeNameUnknown)}},
			{0, &Lookup{Service: "X"}, []nameAnswer{failed(0, TypeLookup, "X", CodeNameUnknown)}}, // names match exactly
		}},
		{"lookups wait for a later publish", []nameStep{
			{1, &Lookup{Service: "w", Wait: true}, nil},
			{2, &Lookup{Service: "w", Wait: true}, nil},
			{1, &Lookup{Service: "w", Wait: true}, nil}, // twice: answered twice
			{2, &Lookup{Service: "other", Wait: true}, nil},
			{0, &Publish{Service: "w", Port: "pw"}, []nameAnswer{
				okPublish(0, "w"), found(1, "w", "pw"), found(1, "w", "pw"), found(2, "w", "pw")}},
			{0, &Publish{Service: "unrelated", Port: "pu"}, []nameAnswer{okPublish(0, "unrelated")}},
			{1, &Publish{Service: "other", Port: "po"}, []nameAnswer{okPublish(1, "other"), found(2, "other", "po")}},
		}},
		{"a lookup waits for its own rank's publish", []nameStep{
			{0, &Lookup{Service: "self", Wait: true}, nil},
			{0, &Publish{Service: "self", Port: "me"}, []nameAnswer{okPublish(0, "self"), found(0, "self", "me")}},
		}},
		{"strings as they are", []nameStep{
			{0, &Publish{Service: "ünï \"cöde\" 𝄞\u2028", Port: strings.Repeat("é", MaxNameLen/2)},
				[]nameAnswer{okPublish(0, "ünï \"cöde\" 𝄞\u2028")}},
			{2, &Lookup{Service: "ünï \"cöde\" 𝄞\u2028"}, []nameAnswer{found(2, "ünï \"cöde\" 𝄞\u2028", strings.Repeat("é", MaxNameLen/2))}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := startServer(t, nil)
			cs := joinSeats(t, url, "job", 3)
			for _, s := range tc.steps {
				s.run(t, cs)
			}
			quiet(t, cs...)
			var answers int
			for _, s := range tc.steps {
				answers += len(s.want)
			}
			require.Equal(t, uint64(answers), srv.Stats().NameAnswers)
		})
	}
}

// Each job has names of its own.
func TestNamesPerJob(t *testing.T) {
	srv, url := startServer(t, nil)
	a := joinSeats(t, url, "a", 2)
	b := joinSeats(t, url, "b", 2)
	nameStep{0, &Publish{Service: "s", Port: "in-a"}, []nameAnswer{okPublish(0, "s")}}.run(t, a)
	nameStep{1, &Lookup{Service: "s"}, []nameAnswer{failed(1, TypeLookup, "s", CodeNameUnknown)}}.run(t, b)
	nameStep{1, &Lookup{Service: "s", Wait: true}, nil}.run(t, b)
	nameStep{0, &Publish{Service: "s", Port: "in-b"}, []nameAnswer{okPublish(0, "s"), found(1, "s", "in-b")}}.run(t, b)
	nameStep{1, &Lookup{Service: "s"}, []nameAnswer{found(1, "s", "in-a")}}.run(t, a)
	require.Equal(t, 2, srv.Stats().Names)
	quiet(t, append(a, b...)...)
}

// A late rank finds what the job's ranks published before it joined, and
// they what it publishes.
func TestLateRankLooksUpName(t *testing.T) {
	_, url := startServer(t, nil)
	g := formGrowJob(t, url, growth[1].start)
	nameStep{0, &Publish{Service: "manager", Port: "port-0"}, []nameAnswer{okPublish(0, "manager")}}.run(t, g.world)
	late := g.joinLate(t, g.world, 2, KindBrowser, "")
	cs := append(g.world, late)
	nameStep{2, &Lookup{Service: "manager"}, []nameAnswer{found(2, "manager", "port-0")}}.run(t, cs)
	nameStep{1, &Lookup{Service: "worker-2", Wait: true}, nil}.run(t, cs)
	nameStep{2, &Publish{Service: "worker-2", Port: "port-2"}, []nameAnswer{okPublish(2, "worker-2"), found(1, "worker-2", "port-2")}}.run(t, cs)
	quiet(t, cs...)
}

// A rank's names go with it when it leaves the job, for whatever reason:
// a lookup after its departure is name-unknown, and one that waits is
// answered by the next publish of the service; the names of the others
// stay, as do the lookups they parked. Its own parked lookups are
// dropped.
func TestNamesRemovedWithPublisher(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(t *testing.T, cs []*Client) // rank 1 leaves
	}{
		{"finalize", func(t *testing.T, cs []*Client) {
			require.NoError(t, cs[1].Send(context.Background(), &Leaving{}))
			require.NoError(t, cs[1].Close())
		}},
		{"crash", func(t *testing.T, cs []*Client) {
			_ = cs[1].ws.closeNow()
		}},
		{"abort", func(t *testing.T, cs []*Client) {
			require.NoError(t, cs[1].Send(context.Background(), &Abort{Code: 2}))
			_ = cs[1].ws.closeNow()
		}},
		{"declared failed", func(t *testing.T, cs []*Client) {
			require.NoError(t, cs[0].Send(context.Background(), &Suspect{Rank: 1, Reason: "link closed"}))
			expectClosedWith(t, cs[1], CodeDeclaredFailed)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url := startServer(t, nil)
			left := make(chan struct{}, 8)
			srv.leaveHook = func() { left <- struct{}{} }
			cs := joinSeats(t, url, "job", 3)
			for _, s := range []nameStep{
				{0, &Publish{Service: "zero", Port: "port-0"}, []nameAnswer{okPublish(0, "zero")}},
				{1, &Publish{Service: "one", Port: "port-1"}, []nameAnswer{okPublish(1, "one")}},
				{1, &Publish{Service: "also-one", Port: "port-1b"}, []nameAnswer{okPublish(1, "also-one")}},
				{1, &Lookup{Service: "never", Wait: true}, nil},
				{2, &Lookup{Service: "later", Wait: true}, nil},
				{0, &Lookup{Service: "one"}, []nameAnswer{found(0, "one", "port-1")}},
			} {
				s.run(t, cs)
			}
			require.Equal(t, 3, srv.Stats().Names)

			tc.leave(t, cs)
			select {
			case <-left:
			case <-time.After(hangGuard):
				t.Fatal("rank 1 did not leave before the hang guard")
			}
			for _, c := range []*Client{cs[0], cs[2]} {
				require.Equal(t, 1, recvAs[*Left](t, c).Rank)
			}
			require.Equal(t, 1, srv.Stats().Names)
			// rank 2's parked lookup went on another connection: wait
			// until the server has it (never assert under the lock: a
			// failure would hold it through the cleanup)
			require.Eventually(t, func() bool {
				srv.mu.Lock()
				defer srv.mu.Unlock()
				return len(srv.jobs["job"].waiting["later"]) == 1
			}, hangGuard, 5*time.Millisecond, "rank 2's parked lookup")
			srv.mu.Lock()
			_, never := srv.jobs["job"].waiting["never"]
			srv.mu.Unlock()
			require.False(t, never, "the departed rank's parked lookup")

			for _, s := range []nameStep{
				{2, &Lookup{Service: "one"}, []nameAnswer{failed(2, TypeLookup, "one", CodeNameUnknown)}},
				{0, &Lookup{Service: "also-one"}, []nameAnswer{failed(0, TypeLookup, "also-one", CodeNameUnknown)}},
				{2, &Lookup{Service: "zero"}, []nameAnswer{found(2, "zero", "port-0")}},
				{2, &Lookup{Service: "one", Wait: true}, nil},
				{0, &Publish{Service: "one", Port: "port-0b"}, []nameAnswer{okPublish(0, "one"), found(2, "one", "port-0b")}},
				{0, &Publish{Service: "later", Port: "port-0c"}, []nameAnswer{okPublish(0, "later"), found(2, "later", "port-0c")}},
				{0, &Publish{Service: "never", Port: "port-0d"}, []nameAnswer{okPublish(0, "never")}}, // nobody waits for it now
			} {
				s.run(t, cs)
			}
			quiet(t, cs[0], cs[2])
		})
	}
}

// A job holds at most MaxNames names (name-limit past them, from any
// rank, until one is removed); a connection parks at most
// MaxWaitingLookups lookups (name-limit past them, until one is
// answered), others' connections as many again. The connection stays up.
func TestNameLimits(t *testing.T) {
	srv, url := startServer(t, nil)
	cs := joinSeats(t, url, "job", 3)

	// parked lookups, per connection
	for i := range MaxWaitingLookups {
		nameStep{1, &Lookup{Service: fmt.Sprint("w", i), Wait: true}, nil}.run(t, cs)
	}
	nameStep{1, &Lookup{Service: "w16", Wait: true}, []nameAnswer{failed(1, TypeLookup, "w16", CodeNameLimit)}}.run(t, cs)
	nameStep{1, &Lookup{Service: "w16"}, []nameAnswer{failed(1, TypeLookup, "w16", CodeNameUnknown)}}.run(t, cs) // one that does not wait
	nameStep{2, &Lookup{Service: "w0", Wait: true}, nil}.run(t, cs)                                              // another connection parks its own
	nameStep{0, &Publish{Service: "w0", Port: "p"}, []nameAnswer{okPublish(0, "w0"), found(1, "w0", "p"), found(2, "w0", "p")}}.run(t, cs)
	nameStep{1, &Lookup{Service: "w16", Wait: true}, nil}.run(t, cs) // the answered one made room
	nameStep{1, &Lookup{Service: "w17", Wait: true}, []nameAnswer{failed(1, TypeLookup, "w17", CodeNameLimit)}}.run(t, cs)

	// names, per job: w0 and 63 more
	for i := 1; i < MaxNames; i++ {
		s := fmt.Sprint("s", i)
		nameStep{0, &Publish{Service: s, Port: "p"}, []nameAnswer{okPublish(0, s)}}.run(t, cs)
	}
	require.Equal(t, MaxNames, srv.Stats().Names)
	nameStep{0, &Publish{Service: "s64", Port: "p"}, []nameAnswer{failed(0, TypePublish, "s64", CodeNameLimit)}}.run(t, cs)
	nameStep{1, &Publish{Service: "w16", Port: "p"}, []nameAnswer{failed(1, TypePublish, "w16", CodeNameLimit)}}.run(t, cs)
	nameStep{0, &Publish{Service: "s1", Port: "p"}, []nameAnswer{failed(0, TypePublish, "s1", CodeNameTaken)}}.run(t, cs) // taken before full
	nameStep{2, &Unpublish{Service: "w0"}, []nameAnswer{{2, Name{Op: TypeUnpublish, Service: "w0"}}}}.run(t, cs)
	nameStep{2, &Publish{Service: "w16", Port: "p2"}, []nameAnswer{okPublish(2, "w16"), found(1, "w16", "p2")}}.run(t, cs)
	require.Equal(t, MaxNames, srv.Stats().Names)
	quiet(t, cs...)
	require.Zero(t, srv.Stats().Rejected[CodeNameLimit], "a name service failure is an answer, not a rejection")
}

// The name service is for joined ranks: a request before the join is a
// protocol error, as is a Name from a client; malformed requests are
// bad-message. Each gets the error and a close.
func TestNameMessagesRejected(t *testing.T) {
	for _, tc := range []struct {
		name string
		join bool   // join first
		send string // the message, raw
		want ErrorCode
	}{
		{"publish before join", false, `{"v":1,"type":"publish","data":{"service":"s","port":"p"}}`, CodeProtocol},
		{"unpublish before join", false, `{"v":1,"type":"unpublish","data":{"service":"s"}}`, CodeProtocol},
		{"lookup before join", false, `{"v":1,"type":"lookup","data":{"service":"s","wait":true}}`, CodeProtocol},
		{"name from a client", true, `{"v":1,"type":"name","data":{"op":"lookup","service":"s","port":"p"}}`, CodeProtocol},
		{"empty service", true, `{"v":1,"type":"publish","data":{"service":"","port":"p"}}`, CodeBadMessage},
		{"no port", true, `{"v":1,"type":"publish","data":{"service":"s"}}`, CodeBadMessage},
		{"service too long", true, `{"v":1,"type":"lookup","data":{"service":"` + strings.Repeat("s", MaxNameLen+1) + `"}}`, CodeBadMessage},
		{"port too long", true, `{"v":1,"type":"publish","data":{"service":"s","port":"` + strings.Repeat("p", MaxNameLen+1) + `"}}`, CodeBadMessage},
		{"invalid UTF-8", true, "{\"v\":1,\"type\":\"unpublish\",\"data\":{\"service\":\"\xc3\"}}", CodeBadMessage},
		{"bad op", true, `{"v":1,"type":"name","data":{"op":"join","service":"s"}}`, CodeBadMessage},
		{"unknown field", true, `{"v":1,"type":"lookup","data":{"service":"s","job":"other"}}`, CodeBadMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := startServer(t, nil)
			ws := rawDial(t, url)
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			if tc.join {
				rawSend(t, ws, &Join{Job: "job", Token: mint(t, "job", 2), Kind: KindNative})
				_, data, err := ws.Read(ctx)
				require.NoError(t, err)
				m, err := Decode(data)
				require.NoError(t, err)
				require.IsType(t, &Welcome{}, m)
			}
			require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(tc.send)))
			rawExpectError(t, ws, tc.want)
		})
	}
}
