//go:build !js

package signaling

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"
)

// MinSecretLen is the shortest server secret accepted.
const MinSecretLen = 16

// Claims is what a job token vouches for. Every rank of a job must present a
// token with the same Size and Settings, and either every one a seat or none:
// they define the job's world.
//
// A token with a Seat is a seat token: it admits its holder to that rank of
// the job and to no other, so a launcher hands each rank process its own and
// a leaked token costs one seat, not the job. A token without one is an open
// token: it admits anyone to any free rank, for jobs of volunteers (browser
// tabs) that may come and go until the job forms. See the package doc,
// Tokens.
//
// A token with a Max above Size lets the job grow: the job forms when its
// Size ranks are present, as any other (Size is a minimum), and then
// admits late ranks Size…Max-1 (Max is a limit), each with an open token
// of the job, since a seat token names a seat below Size. An open token
// with Late admits late ranks only: it cannot take a seat of the world,
// nor create the job, so a late rank that comes too early cannot turn a
// launcher's seated job into an open one. See the package doc, Growth.
type Claims struct {
	Job      string            `json:"j"`
	Size     int               `json:"n"`
	Expires  int64             `json:"e"` // unix seconds
	Settings map[string]string `json:"s,omitempty"`
	Seat     *int              `json:"r,omitempty"` // the one rank this token admits; nil: any free rank
	// Max is the most ranks the job may grow to, in [Size, MaxJobSize]
	// (and at most the server's Config.MaxJobSize); 0, or Size, when
	// it cannot grow.
	Max int `json:"m,omitempty"`
	// Late makes an open token of a job that may grow a late token: it
	// admits a late rank once the job formed, and nothing before
	// (CodeNotFormed).
	Late bool `json:"l,omitempty"`
}

// Limit is the most ranks the claims' job can hold: Max, or Size if
// the job cannot grow.
func (c Claims) Limit() int { return max(c.Size, c.Max) }

// grows reports whether the job may grow past its Size.
func (c Claims) grows() bool { return c.Max > c.Size }

// tokenDomain separates token MACs from any other use of the secret.
const tokenDomain = "meshmpi-signal-token-v1\x00"

func tokenMAC(secret, payload []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(tokenDomain))
	h.Write(payload)
	return h.Sum(nil)
}

// MintToken returns a token for job with size ranks that expires at expires.
func MintToken(secret []byte, job string, size int, expires time.Time) (string, error) {
	return Mint(secret, Claims{Job: job, Size: size, Expires: expires.Unix()})
}

// Mint returns a token for the claims: base64url(JSON claims) "." base64url(
// HMAC-SHA256(secret, domain || JSON claims)).
func Mint(secret []byte, c Claims) (string, error) {
	if len(secret) < MinSecretLen {
		return "", fmt.Errorf("%w: secret shorter than %d bytes", ErrConfig, MinSecretLen)
	}
	if err := validJobID(c.Job); err != nil {
		return "", err
	}
	if err := validSize(c.Size); err != nil {
		return "", err
	}
	if err := validSettings(c.Settings); err != nil {
		return "", err
	}
	if err := validSeat(c.Seat, c.Size); err != nil {
		return "", err
	}
	if err := validMax(c.Max, c.Size); err != nil {
		return "", err
	}
	if err := validLate(c); err != nil {
		return "", err
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	enc := base64.RawURLEncoding
	tok := enc.EncodeToString(payload) + "." + enc.EncodeToString(tokenMAC(secret, payload))
	if len(tok) > MaxTokenLen {
		return "", invalid("token longer than %d bytes (too many settings)", MaxTokenLen)
	}
	return tok, nil
}

// MintSeats returns the seat tokens of a job: tokens[r] admits rank r only.
// c.Seat and c.Late are ignored.
func MintSeats(secret []byte, c Claims) ([]string, error) {
	if err := validSize(c.Size); err != nil {
		return nil, err
	}
	toks := make([]string, c.Size)
	c.Late = false
	for r := range toks {
		c.Seat = &r
		tok, err := Mint(secret, c)
		if err != nil {
			return nil, err
		}
		toks[r] = tok
	}
	return toks, nil
}

func validSeat(seat *int, size int) error {
	if seat != nil && (*seat < 0 || *seat >= size) {
		return invalid("seat %d outside [0, %d)", *seat, size)
	}
	return nil
}

// validLate checks that a late token is an open token of a job that may
// grow.
func validLate(c Claims) error {
	if c.Late && (c.Seat != nil || !c.grows()) {
		return invalid("a late token is an open token of a job whose max exceeds its size")
	}
	return nil
}

// VerifyToken checks that token was minted with secret for job and has not
// expired at now. Its errors wrap ErrBadToken or ErrExpired.
func VerifyToken(secret []byte, token, job string, now time.Time) (Claims, error) {
	var c Claims
	if len(secret) == 0 {
		return c, fmt.Errorf("%w: no secret", ErrBadToken)
	}
	p, m, ok := strings.Cut(token, ".")
	if !ok || len(token) > MaxTokenLen {
		return c, fmt.Errorf("%w: malformed", ErrBadToken)
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil {
		return c, fmt.Errorf("%w: malformed", ErrBadToken)
	}
	if !hmac.Equal(mac, tokenMAC(secret, payload)) {
		return c, fmt.Errorf("%w: signature mismatch", ErrBadToken)
	}
	if err := strictUnmarshal(payload, &c); err != nil {
		return Claims{}, fmt.Errorf("%w: payload: %v", ErrBadToken, err)
	}
	if c.Job != job {
		return Claims{}, fmt.Errorf("%w: token is for another job", ErrBadToken)
	}
	if validSize(c.Size) != nil || validSettings(c.Settings) != nil || validSeat(c.Seat, c.Size) != nil || validMax(c.Max, c.Size) != nil || validLate(c) != nil {
		return Claims{}, fmt.Errorf("%w: claims out of range", ErrBadToken)
	}
	if now.Unix() >= c.Expires {
		return Claims{}, fmt.Errorf("%w: at %s", ErrExpired, time.Unix(c.Expires, 0).UTC().Format(time.RFC3339))
	}
	return c, nil
}

// sameWorld reports whether two claims describe the same job world: the
// same size, limit and settings, and seat tokens both or open tokens both
// (so an open token, if one was ever minted for the job, cannot take a
// seat of a launcher's job).
func (c Claims) sameWorld(o Claims) bool {
	return c.sameShape(o) && (c.Seat == nil) == (o.Seat == nil)
}

// sameShape reports whether two claims give the job the same size,
// limit and settings, whatever their seats: an open token of a seated
// job that may grow admits late ranks to it.
func (c Claims) sameShape(o Claims) bool {
	return c.Size == o.Size && c.Limit() == o.Limit() && maps.Equal(c.Settings, o.Settings)
}

// strictUnmarshal decodes exactly one JSON value with no unknown fields.
// Tokens and the admin endpoint are never built under js, so they keep
// encoding/json; the protocol's messages have their own codec (json.go).
func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
