// Package natsbus joins signaling servers into a cluster over NATS: it is
// the signaling.Bus of `signal serve --nats URL` (or --nats-embedded).
//
// Each server subscribes to its own subject for the datagrams other
// servers send it (bridged ranks' messages, in order per sender), beats
// on a shared subject so the others know it is alive, and keeps two
// JetStream key-value buckets with the others: which server is each
// job's home (claimed with a create, taken over from a lost server with
// a compare-and-set on the entry's revision, so exactly one server wins),
// and each job's last saved state, which the server that takes a job over
// loads. The websocket side of the signaling server does not know NATS
// is there; package signaling owns the interface.
package natsbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Liveness defaults: a server beats every DefaultBeat and is lost when
// none came for DefaultTimeout (or when it said it leaves).
const (
	DefaultBeat    = 500 * time.Millisecond
	DefaultTimeout = 3 * time.Second
)

// Options configure a Bus. Zero fields take the defaults named beside them.
type Options struct {
	// Conn is the NATS connection to use; if nil, New dials URL.
	Conn *nats.Conn
	// URL is the NATS server (or a comma-separated list of a cluster's).
	URL string
	// Prefix starts every subject and bucket name (default "meshmpi"):
	// clusters that share a NATS deployment use different prefixes.
	Prefix string
	// Replicas is the replica count of the key-value buckets (default 1;
	// 3 in a 3-node NATS cluster survives the loss of one node).
	Replicas int
	// Beat and Timeout are the liveness period and the silence after
	// which a server is lost (DefaultBeat, DefaultTimeout).
	Beat, Timeout time.Duration
	// Logger receives the bus's logs; nil discards them.
	Logger *slog.Logger
}

// ErrClosed is returned by a closed Bus.
var ErrClosed = errors.New("natsbus: closed")

// Bus is one signaling server's side of the cluster.
type Bus struct {
	id     string
	opts   Options
	nc     *nats.Conn
	ownNC  bool
	homes  jetstream.KeyValue
	states jetstream.KeyValue
	log    *slog.Logger

	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	seen   map[string]time.Time // last beat of each live server
	gone   map[string]bool      // servers lost: never alive again
	closed bool
	subs   []*nats.Subscription
}

// New connects the bus and makes (or finds) the cluster's buckets.
func New(ctx context.Context, o Options) (*Bus, error) {
	if o.Prefix == "" {
		o.Prefix = "meshmpi"
	}
	if o.Replicas <= 0 {
		o.Replicas = 1
	}
	if o.Beat <= 0 {
		o.Beat = DefaultBeat
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Timeout < 2*o.Beat {
		return nil, fmt.Errorf("natsbus: timeout %v shorter than two beats (%v)", o.Timeout, o.Beat)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	b := &Bus{id: hex.EncodeToString(id[:]), opts: o, nc: o.Conn, log: log, stop: make(chan struct{}),
		seen: make(map[string]time.Time), gone: make(map[string]bool)}
	if b.nc == nil {
		nc, err := nats.Connect(o.URL, nats.Name("meshmpi-signal-"+b.id), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
		if err != nil {
			return nil, fmt.Errorf("natsbus: connect %s: %w", o.URL, err)
		}
		b.nc, b.ownNC = nc, true
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		b.closeConn()
		return nil, fmt.Errorf("natsbus: jetstream: %w", err)
	}
	for _, kv := range []struct {
		kv   *jetstream.KeyValue
		name string
	}{{&b.homes, "homes"}, {&b.states, "jobs"}} {
		cfg := jetstream.KeyValueConfig{Bucket: o.Prefix + "_" + kv.name, History: 1, Storage: jetstream.MemoryStorage, Replicas: o.Replicas}
		for {
			// a NATS cluster answers JetStream requests once it elected
			// its leader: ask again until then, each time briefly
			actx, cancel := context.WithTimeout(ctx, 3*time.Second)
			*kv.kv, err = js.CreateOrUpdateKeyValue(actx, cfg)
			cancel()
			if err == nil || ctx.Err() != nil {
				break
			}
			log.Info("waiting for JetStream", "bucket", cfg.Bucket, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
		if err != nil {
			b.closeConn()
			return nil, fmt.Errorf("natsbus: bucket %s: %w", cfg.Bucket, err)
		}
	}
	return b, nil
}

// ID implements signaling.Bus.
func (b *Bus) ID() string { return b.id }

// Conn is the bus's NATS connection (for health checks).
func (b *Bus) Conn() *nats.Conn { return b.nc }

func (b *Bus) subject(server string) string { return b.opts.Prefix + ".srv." + server }

// Start implements signaling.Bus.
func (b *Bus) Start(deliver func(from string, data []byte), lost func(server string)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.start = time.Now()
	own, err := b.nc.Subscribe(b.subject(b.id), func(m *nats.Msg) {
		if n := len(m.Data); n > 0 && n > int(m.Data[0]) {
			deliver(string(m.Data[1:1+m.Data[0]]), m.Data[1+m.Data[0]:])
		}
	})
	if err != nil {
		return fmt.Errorf("natsbus: subscribe: %w", err)
	}
	// a big job's Ready, times its ranks, may arrive at once: never
	// drop a datagram for being behind
	_ = own.SetPendingLimits(-1, -1)
	beats, err := b.nc.Subscribe(b.opts.Prefix+".beat", func(m *nats.Msg) {
		from := string(m.Data)
		b.mu.Lock()
		if !b.gone[from] && from != b.id {
			b.seen[from] = time.Now()
		}
		b.mu.Unlock()
	})
	if err != nil {
		_ = own.Unsubscribe()
		return fmt.Errorf("natsbus: subscribe: %w", err)
	}
	byes, err := b.nc.Subscribe(b.opts.Prefix+".bye", func(m *nats.Msg) {
		if b.markGone(string(m.Data)) {
			lost(string(m.Data))
		}
	})
	if err != nil {
		_ = own.Unsubscribe()
		_ = beats.Unsubscribe()
		return fmt.Errorf("natsbus: subscribe: %w", err)
	}
	b.subs = []*nats.Subscription{own, beats, byes}
	_ = b.nc.Publish(b.opts.Prefix+".beat", []byte(b.id))
	b.wg.Add(1)
	go b.beat(lost)
	return nil
}

// beat announces this server and finds the servers that went silent.
func (b *Bus) beat(lost func(string)) {
	defer b.wg.Done()
	t := time.NewTicker(b.opts.Beat)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		_ = b.nc.Publish(b.opts.Prefix+".beat", []byte(b.id))
		var silent []string
		b.mu.Lock()
		for id, at := range b.seen {
			if time.Since(at) > b.opts.Timeout {
				silent = append(silent, id)
			}
		}
		b.mu.Unlock()
		for _, id := range silent {
			if b.markGone(id) {
				b.log.Info("server lost", "server", id)
				lost(id)
			}
		}
	}
}

// markGone records server as lost and reports whether it was not yet.
func (b *Bus) markGone(server string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if server == b.id || b.gone[server] {
		return false
	}
	b.gone[server] = true
	delete(b.seen, server)
	return true
}

// alive reports whether server is a live server of the cluster. A server
// never heard of is alive until this one has listened for a Timeout: it
// may just not have beaten since this one started.
func (b *Bus) alive(ctx context.Context, server string) (bool, error) {
	for {
		b.mu.Lock()
		_, seen := b.seen[server]
		gone := b.gone[server]
		wait := b.opts.Timeout - time.Since(b.start)
		b.mu.Unlock()
		switch {
		case server == b.id || seen:
			return true, nil
		case gone || wait <= 0:
			return false, nil
		}
		t := time.NewTimer(min(wait, b.opts.Beat))
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// Send implements signaling.Bus.
func (b *Bus) Send(to string, data []byte) error {
	msg := make([]byte, 0, 1+len(b.id)+len(data))
	msg = append(msg, byte(len(b.id)))
	msg = append(msg, b.id...)
	msg = append(msg, data...)
	return b.nc.Publish(b.subject(to), msg)
}

// key is a job id as a key of the buckets: hex, since job ids may hold
// dots, which separate a key's tokens.
func key(job string) string { return "j" + hex.EncodeToString([]byte(job)) }

// Home implements signaling.Bus.
func (b *Bus) Home(ctx context.Context, job string) (string, bool, error) {
	k := key(job)
	for range 16 {
		e, err := b.homes.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			_, err = b.homes.Create(ctx, k, []byte(b.id))
			if err == nil {
				return b.id, false, nil
			}
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // another server claimed it first
			}
		}
		if err != nil {
			return "", false, fmt.Errorf("natsbus: home of %s: %w", job, err)
		}
		owner := string(e.Value())
		live, err := b.alive(ctx, owner)
		if err != nil {
			return "", false, fmt.Errorf("natsbus: home of %s: %w", job, err)
		}
		if live {
			return owner, false, nil
		}
		_, err = b.homes.Update(ctx, k, []byte(b.id), e.Revision())
		if err == nil {
			b.log.Info("job taken over", "job", job, "from", owner)
			return b.id, true, nil
		}
		// a replicated bucket reports a lost CAS as 10164, which only
		// ErrKeyRevisionMismatch matches; a single replica as 10071
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) && !errors.Is(err, jetstream.ErrKeyExists) {
			return "", false, fmt.Errorf("natsbus: take over %s: %w", job, err)
		}
		// another server took it over first: look again
	}
	return "", false, fmt.Errorf("natsbus: home of %s: contended", job)
}

// SaveJob implements signaling.Bus.
func (b *Bus) SaveJob(job string, state []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := b.states.Put(ctx, key(job), state)
	return err
}

// LoadJob implements signaling.Bus.
func (b *Bus) LoadJob(job string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := b.states.Get(ctx, key(job))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e.Value(), nil
}

// DropJob implements signaling.Bus.
func (b *Bus) DropJob(job string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(b.states.Delete(ctx, key(job)), b.homes.Delete(ctx, key(job)))
}

// Leave implements signaling.Bus: it says goodbye and stops beating.
func (b *Bus) Leave() error {
	b.stopBeating()
	if err := b.nc.Publish(b.opts.Prefix+".bye", []byte(b.id)); err != nil {
		return err
	}
	return b.nc.Flush()
}

func (b *Bus) stopBeating() {
	b.mu.Lock()
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Healthy reports whether the bus reaches NATS.
func (b *Bus) Healthy() error {
	if s := b.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("natsbus: NATS connection %s", s)
	}
	return nil
}

// Servers counts the live servers of the cluster, this one included.
func (b *Bus) Servers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.seen) + 1
}

// Close stops the bus (without Leave: the others find it lost when its
// beats stop) and closes its NATS connection if New dialed it.
func (b *Bus) Close() error {
	b.stopBeating()
	b.mu.Lock()
	b.closed = true
	subs := b.subs
	b.subs = nil
	b.mu.Unlock()
	for _, s := range subs {
		_ = s.Unsubscribe()
	}
	b.closeConn()
	return nil
}

func (b *Bus) closeConn() {
	if b.ownNC {
		b.nc.Close()
	}
}

// Jobs counts the jobs the cluster serves: the homes claimed.
func (b *Bus) Jobs(ctx context.Context) (int, error) {
	l, err := b.homes.ListKeys(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for range l.Keys() {
		n++
	}
	return n, nil
}
