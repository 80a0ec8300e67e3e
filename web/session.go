//go:build !js

package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// SessionCookie is the organizer's session cookie.
const SessionCookie = "meshmpi_session"

// CSRFHeader carries the session's CSRF token on every state-changing
// organizer request.
const CSRFHeader = "X-CSRF-Token"

// session is an organizer's login.
type session struct {
	id      string // the cookie's value
	csrf    string
	expires time.Time
}

// sessions is the bounded table of organizer sessions, and the throttle
// of failed logins.
type sessions struct {
	ttl time.Duration
	max int

	mu sync.Mutex
	m  map[string]*session

	// failed logins: a token bucket per client address, and one shared
	// by all of them, so a guesser gets a few tries a second however
	// many addresses it has, and one address cannot keep the organizer
	// out by itself
	all    bucket
	byAddr map[string]*bucket
}

// bucket is a token bucket of failed logins.
type bucket struct {
	tokens float64
	last   time.Time
}

// take refills b by rate a second up to burst, then takes a token if
// there is one.
func (b *bucket) take(now time.Time, burst, rate float64) bool {
	if !b.has(now, burst, rate) {
		return false
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate) - 1
	b.last = now
	return true
}

// has reports whether b holds a token now.
func (b *bucket) has(now time.Time, burst, rate float64) bool {
	return min(burst, b.tokens+now.Sub(b.last).Seconds()*rate) >= 1
}

// Login throttle: an address may fail addrBurst times at once, then
// addrRate times a second; all addresses together allBurst and allRate.
// At most maxAddrs addresses are tracked (beyond, the shared bucket
// alone holds them back).
const (
	addrBurst = 10
	addrRate  = 0.5
	allBurst  = 100
	allRate   = 10.0
	maxAddrs  = 4096
)

func newSessions(ttl time.Duration, max int) *sessions {
	return &sessions{ttl: ttl, max: max, m: map[string]*session{}, all: bucket{tokens: allBurst}, byAddr: map[string]*bucket{}}
}

// randomID returns n random bytes, base64url.
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// randomHex returns n random bytes, in lower-case hex (job ids: they
// read well in lists, paths and file names).
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// create starts a session, dropping expired ones and, if the table is
// still full, the one closest to its expiry.
func (s *sessions) create(now time.Time) *session {
	ns := &session{id: randomID(32), csrf: randomID(32), expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		var oldest *session
		for id, x := range s.m {
			if !now.Before(x.expires) {
				delete(s.m, id)
			} else if oldest == nil || x.expires.Before(oldest.expires) {
				oldest = x
			}
		}
		if len(s.m) >= s.max && oldest != nil {
			delete(s.m, oldest.id)
		}
	}
	s.m[ns.id] = ns
	return ns
}

// get returns the request's live session, or nil.
func (s *sessions) get(r *http.Request, now time.Time) *session {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 64 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x := s.m[c.Value]
	if x == nil {
		return nil
	}
	if !now.Before(x.expires) {
		delete(s.m, x.id)
		return nil
	}
	return x
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// failure counts a failed login from addr; false: too many failures
// lately, the client should wait.
func (s *sessions) failure(addr string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.byAddr[addr]
	if b == nil {
		if len(s.byAddr) >= maxAddrs {
			for a, x := range s.byAddr { // forget those that refilled
				if x.tokens+now.Sub(x.last).Seconds()*addrRate >= addrBurst {
					delete(s.byAddr, a)
				}
			}
		}
		b = &bucket{tokens: addrBurst, last: now}
		if len(s.byAddr) < maxAddrs {
			s.byAddr[addr] = b
		}
	}
	return b.take(now, addrBurst, addrRate) && s.all.take(now, allBurst, allRate)
}

// throttled reports whether failed logins from addr, or from everyone,
// have used up their bucket.
func (s *sessions) throttled(addr string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.byAddr[addr]; b != nil && !b.has(now, addrBurst, addrRate) {
		return true
	}
	return !s.all.has(now, allBurst, allRate)
}

// clientAddr is the request's remote address without its port.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// secretEqual compares a try with a secret in constant time (hashes, so
// neither length leaks).
func secretEqual(try, secret string) bool {
	if secret == "" {
		return false
	}
	a, b := sha256.Sum256([]byte(try)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// isLoopback reports whether the request comes from this host.
func isLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// ownHost reports whether a request's Host names this server: an IP
// address, "localhost" or one of hosts. A name an attacker's DNS resolves
// to 127.0.0.1 (DNS rebinding) is none of these.
func ownHost(hostport string, hosts []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	for _, h := range hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether the request's Origin is this server's: the
// request's own Host, or the public URL's.
func sameOrigin(r *http.Request, public *url.URL) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return public != nil && strings.EqualFold(u.Host, public.Host) && u.Scheme == public.Scheme
}
