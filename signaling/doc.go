// Package signaling is the websocket signaling service that bootstraps a
// meshmpi job's WebRTC mesh: a versioned JSON protocol, a Server (an
// http.Handler) and a Client that builds natively and for GOOS=js.
//
// A job is a room of fixed size N, its world. Ranks join with a job id and a
// token, get a rank, the ICE servers and the job-wide settings; the server
// relays SDP offers/answers and ICE candidates between ranks of the same job,
// announces departures and tells everyone when all N are present. After the
// mesh is up it carries no application data.
//
// # Wire format
//
// Every websocket text message is one envelope, at most MaxMessageBytes (the
// server's limit, Config.MaxMessageBytes, defaults to 64 KiB):
//
//	{"v": 1, "type": "<type>", "data": {...}}
//
// Unknown versions, types and fields, repeated fields, and trailing data,
// are rejected; member names match exactly, strings are UTF-8 (RFC 8259), a
// null member counts as absent. The package encodes and decodes this with
// its own small codec (json.go), the same on every target and byte for byte
// what encoding/json writes for the message structs: encoding/json would add
// about 150 KB to a browser rank's gzipped size.
//
//	type     direction  data
//	join     C→S        job, token, rank? (requested), kind (native|browser|wasi)
//	welcome  S→C        protocol, job, rank, size, iceServers?, settings?, limits? (rate, burst, bytes)
//	ready    S→C        size, kinds[rank]            (all N ranks present)
//	signal   C→S→C      to, from, kind (sdp-offer|sdp-answer|ice-candidate|connect), payload (JSON value)
//	left     S→C        rank, reason?               (a rank's connection is gone)
//	error    S→C        code, message?              (then a close, unless code is rank-absent)
//	ping     both       id?                          (answered by pong with the same id)
//	pong     both       id?
//
// # Flow
//
//	client                          server
//	  join{job, token, rank?} ───▶  verify token, assign rank
//	                         ◀───  welcome{rank, size, iceServers, settings}
//	                         ◀───  ready{size, kinds}     once N ranks joined
//	  signal{to, payload}    ───▶  from := sender's rank, forward to rank "to"
//	                         ◀───  signal{to, from, payload}
//	                         ◀───  left{rank}             when a rank disconnects
//
// The first message must be a join (within Config.JoinTimeout). Ranks are
// given in join order, or the requested one if free. A job accepts joins until
// it is ready; after that a freed rank stays vacant (a lost rank is a failed
// process, not a seat to refill). A job disappears when its last rank leaves.
//
// # Tokens
//
// A token is base64url(JSON claims) "." base64url(HMAC-SHA256(secret,
// domain || claims)); the claims are the job id, its size N, the expiry (unix
// seconds) and the job settings. Mint them with MintToken/Mint, the
// `signal token` command or POST /admin/token (Config.AdminKey). All ranks of
// a job must present tokens with the same size and settings.
//
// # Enforcement
//
// The server stamps every relayed signal's from with the sender's rank, so no
// rank speaks as another; it relays only inside the sender's job. These get an
// error message and a close, and leave every other connection alone:
// undecodable or invalid messages (bad-message), messages over the size limit
// (too-large, closed without a handshake), more than Config.MessageRate
// messages per second after a burst of Config.MessageBurst (rate-limited),
// server-only messages, a second join or a signal before join (protocol), bad,
// expired or foreign tokens (bad-token, expired-token), a signal to a rank
// outside [0, N) or to oneself (bad-rank), taken ranks, full jobs and the
// server limits on jobs, connections and job size. A signal to a rank of the
// job that is not connected gets a rank-absent error but no close. Browser
// origins are checked against Config.OriginPatterns during the upgrade (403).
// The welcome tells the client the rate limit, and Client.Send paces itself
// inside it (with a margin), so a rank that opens many connections at once
// slows down rather than being cut off.
// The server pings every connection each Config.PingInterval; a socket that
// does not answer within Config.PingTimeout is dropped and announced as left.
//
// # Wasm
//
// The Client's protocol logic (join, welcome, pacing, decoding) is one piece
// of code on every target; only the websocket under it differs. Natively
// and under wasip1 it is coder/websocket. Under GOOS=js it is the page's
// (or worker's) own WebSocket through syscall/js (client_js.go): coder's js
// build keeps net/http and crypto/tls in the binary, about 0.55 MB of a
// browser rank's gzipped size. Differences under js: the client sends no
// websocket-level pings (the browser answers the server's); a page cannot
// pause a WebSocket, so messages beyond DialOptions.Queue wait in the
// transport's queue instead of holding back the server; a page cannot drop
// a connection without a closing handshake; Close waits at most 5 s for it.
//
// The Server, Local and tokens (Mint, VerifyToken, Claims) are not built
// under js: a page cannot listen, and leaving them out keeps net/http and
// crypto out of browser ranks.
package signaling
