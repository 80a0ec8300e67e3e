// Package host runs WASI ranks: it is the host's end of the guest↔host
// protocol that package wasm describes. Serve relays one guest's stream
// into a job (it joins the job for the guest over signaling and the
// WebRTC mesh, one mesh member per guest); Program runs a rank's module
// under wazero, compiled once for any number of ranks, and serves it over
// a pre-opened loopback socket, with WASI's poll_oneoff replaced so that
// a waiting guest sleeps until its host writes to it instead of spinning
// (poll.go says why and how). A runtime without socket pre-opens
// (wasmtime) serves the same protocol through Serve over a stream its
// host functions feed.
package host
