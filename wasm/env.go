package wasm

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/meshmpi/meshmpi/peer"
)

// How a guest reaches its host, as the host writes it into the guest's
// environment (meshmpi.EnvHost):
//
//	listener:FD:KEY   accept the host's connection on the pre-opened TCP
//	                  listener FD; the host presents KEY (hex) first
const listenerPrefix = "listener:"

// ListenerEnv is the EnvHost value for a guest whose host pre-opened a
// TCP listener as file descriptor fd and will present key.
func ListenerEnv(fd int, key [KeyLen]byte) string {
	return listenerPrefix + strconv.Itoa(fd) + ":" + hex.EncodeToString(key[:])
}

// parseListenerEnv reads a ListenerEnv value.
func parseListenerEnv(v string) (fd int, key [KeyLen]byte, err error) {
	rest, ok := strings.CutPrefix(v, listenerPrefix)
	fdText, keyText, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return 0, key, fmt.Errorf("wasm: host address %q: want listener:FD:KEY: %w", v, peer.ErrNotSupported)
	}
	fd, err = strconv.Atoi(fdText)
	if err != nil || fd < 0 {
		return 0, key, fmt.Errorf("wasm: host address %q: bad file descriptor", v)
	}
	b, err := hex.DecodeString(keyText)
	if err != nil || len(b) != KeyLen {
		return 0, key, fmt.Errorf("wasm: host address %q: want a %d-byte hex key", v, KeyLen)
	}
	copy(key[:], b)
	return fd, key, nil
}
