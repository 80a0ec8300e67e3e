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
//	calls:V           speak through the meshmpi host functions, call
//	                  interface version V (CallsVersion); the zero key
const listenerPrefix = "listener:"

// callsPrefix starts the EnvHost value of the call transport.
const callsPrefix = "calls:"

// CallsVersion is the version of the meshmpi host functions (module
// "meshmpi": stream_write, stream_read, stream_close; the package doc
// has their contract). A host sets it in the guest's environment
// (CallsEnv) and a guest refuses a version it does not speak, naming
// both, as the stream's own hello does.
const CallsVersion = 1

// CallsEnv is the EnvHost value for a guest whose host provides the
// meshmpi host functions (a runtime without socket pre-opens, wasmtime).
// No other process can reach that stream, so both ends use the zero key.
func CallsEnv() string { return callsPrefix + strconv.Itoa(CallsVersion) }

// isCallsEnv reports whether an EnvHost value asks for the call
// transport, and checks the version it names.
func isCallsEnv(v string) (bool, error) {
	rest, ok := strings.CutPrefix(v, callsPrefix)
	if !ok {
		return false, nil
	}
	if n, err := strconv.Atoi(rest); err != nil || n != CallsVersion {
		return true, fmt.Errorf("wasm: the host offers host-function interface %q, this rank speaks %d: %w", rest, CallsVersion, peer.ErrNotSupported)
	}
	return true, nil
}

// EnvOffers is set by a host in its guest's environment to the optional
// messages (proto.go's Version) its end of the stream takes, by name,
// separated by commas: a guest sends such a message, or asks for one,
// only when its host offered it, so a guest built after its host never
// breaks the host's protocol. A host offers, in this version:
//
//	report      the host takes report-ready and may send report
//	telemetry   the host takes telemetry (the guest's operations)
const EnvOffers = "MESHMPI_WASI_HOST_OFFERS"

// OfferReport is EnvOffers' name for the report messages.
const OfferReport = "report"

// OfferTelemetry is EnvOffers' name for the telemetry message.
const OfferTelemetry = "telemetry"

// Offers is the EnvOffers value of a host of this package's version.
func Offers() string { return OfferReport + "," + OfferTelemetry }

// offered reports whether an EnvOffers value offers name.
func offered(offers, name string) bool {
	for offers != "" {
		var o string
		o, offers, _ = strings.Cut(offers, ",")
		if o == name {
			return true
		}
	}
	return false
}

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
