// Package turn is the STUN and TURN server that `signal serve` embeds, so
// that ranks behind NATs find their public addresses (STUN) and ranks that
// cannot reach each other directly (symmetric NATs, UDP-hostile networks)
// relay through it (TURN, RFC 8656, over UDP and TCP). It wraps pion/turn
// with what a job server needs around it:
//
//   - Credentials are short-lived and bound to a rank, in the TURN REST
//     scheme coturn's use-auth-secret also takes: the username is
//     "expiry:job:rank" (expiry in Unix seconds) and the password is the
//     base64 HMAC-SHA1 of the username under a secret the signaling server
//     shares (Credentials). The signaling server mints them when a rank
//     joins and hands them over with the job's ICE servers; nobody types
//     them, and a stolen one dies with its expiry.
//   - Relay sockets come from a bounded port range, and allocations are
//     bounded per rank and per job (quota errors are TURN's 486), so one
//     job cannot take the relay from the others.
//   - Relayed bytes and allocations are counted (Stats), for /metrics.
//
// Ranks see only ICE server entries (URLs, username, credential); the
// package sits beside package signaling, and cmd/signal wires the two.
package turn
