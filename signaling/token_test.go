//go:build !js

package signaling

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var testSecret = []byte("0123456789abcdef-test-secret")

func TestToken(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tok, err := Mint(testSecret, Claims{Job: "j1", Size: 4, Expires: now.Add(time.Hour).Unix(), Settings: map[string]string{"a": "b"}})
	require.NoError(t, err)

	c, err := VerifyToken(testSecret, tok, "j1", now)
	require.NoError(t, err)
	require.Equal(t, 4, c.Size)
	require.Equal(t, map[string]string{"a": "b"}, c.Settings)

	_, err = VerifyToken(testSecret, tok, "j2", now)
	require.ErrorIs(t, err, ErrBadToken, "other job")
	_, err = VerifyToken([]byte("another-secret-of-16+"), tok, "j1", now)
	require.ErrorIs(t, err, ErrBadToken, "other secret")
	_, err = VerifyToken(testSecret, tok, "j1", now.Add(time.Hour))
	require.ErrorIs(t, err, ErrExpired)

	// Flip one character of the payload and of the MAC.
	for _, i := range []int{2, len(tok) - 2} {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		_, err = VerifyToken(testSecret, string(b), "j1", now)
		require.ErrorIs(t, err, ErrBadToken, "tampered at %d", i)
	}
	for _, bad := range []string{"", ".", "abc", "a.b.c", "!!!.###", strings.Repeat("a", MaxTokenLen+1)} {
		_, err = VerifyToken(testSecret, bad, "j1", now)
		require.ErrorIs(t, err, ErrBadToken, bad)
	}
	_, err = VerifyToken(nil, tok, "j1", now)
	require.ErrorIs(t, err, ErrBadToken)
}

func TestMintRejects(t *testing.T) {
	exp := time.Now().Add(time.Hour)
	_, err := MintToken([]byte("short"), "j", 2, exp)
	require.ErrorIs(t, err, ErrConfig)
	_, err = MintToken(testSecret, "", 2, exp)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = MintToken(testSecret, "j", 0, exp)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = MintToken(testSecret, "j", MaxJobSize+1, exp)
	require.ErrorIs(t, err, ErrInvalid)
	for _, c := range []Claims{
		{Job: "j", Size: 4, Max: 3},              // max below size
		{Job: "j", Size: 4, Max: MaxJobSize + 1}, // max above the protocol's
		{Job: "j", Size: 4, Max: -1},
		{Job: "j", Size: 4, Late: true},                        // late without growth
		{Job: "j", Size: 4, Max: 4, Late: true},                // the same
		{Job: "j", Size: 4, Max: 8, Late: true, Seat: intp(0)}, // a late seat
	} {
		c.Expires = exp.Unix()
		_, err = Mint(testSecret, c)
		require.ErrorIs(t, err, ErrInvalid, "%+v", c)
	}
}

// A token's max and late flag are inside the MAC, and come back from
// VerifyToken.
func TestTokenMax(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []Claims{
		{Job: "j", Size: 2, Max: 8},
		{Job: "j", Size: 2, Max: 8, Late: true},
		{Job: "j", Size: 2, Max: 8, Seat: intp(1)},
		{Job: "j", Size: 2, Max: 2},
	} {
		c.Expires = now.Add(time.Hour).Unix()
		tok, err := Mint(testSecret, c)
		require.NoError(t, err)
		got, err := VerifyToken(testSecret, tok, "j", now)
		require.NoError(t, err)
		require.Equal(t, c, got)
		require.Equal(t, max(c.Size, c.Max), got.Limit())
	}
	// claims out of range that a MAC vouches for are still refused
	payload := []byte(`{"j":"j","n":4,"e":1700003600,"m":3}`)
	enc := base64.RawURLEncoding
	bad := enc.EncodeToString(payload) + "." + enc.EncodeToString(tokenMAC(testSecret, payload))
	_, err := VerifyToken(testSecret, bad, "j", now)
	require.ErrorIs(t, err, ErrBadToken)
}
