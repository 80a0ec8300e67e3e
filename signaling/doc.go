// Package signaling is the websocket signaling service that bootstraps a
// meshmpi job's WebRTC mesh: a versioned JSON protocol, a Server (an
// http.Handler) and a Client that builds natively and for GOOS=js.
//
// A job is a room of size N, its world. Ranks join with a job id and a
// token, get a rank, the ICE servers and the job-wide settings; the server
// relays SDP offers/answers and ICE candidates between ranks of the same job,
// announces departures and tells everyone when all N are present. A job
// whose token allows it grows past N once formed, up to its max (see
// Growth). After the mesh is up it carries no application data.
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
//	join     C→S        job, token, rank? (requested), kind (native|browser|wasi), fingerprint?,
//	                    host? (opaque host identity, ≤ 64 bytes), agent? (what runs the rank: a user
//	                    agent, ≤ 256 bytes), resume? (take seat rank back: its key; see Clusters)
//	welcome  S→C        protocol, job, rank, size, iceServers?, settings?, limits? (rate, burst, bytes,
//	                    heartbeatMillis?: send something this often, a pong if nothing else),
//	                    max?, late?, resume?, resumed?  (max: the job may grow to max ranks; late: rank ≥
//	                                                 size; resume: the seat's key, from a cluster's servers;
//	                                                 resumed: the join took a seat back)
//	move     S→C        reason?                     (the server drains: resume through another; see Clusters)
//	ready    S→C        size, kinds[rank], fingerprints[rank]?, hosts[rank]?, max?  (all N ranks present;
//	                                                 a late rank's covers every rank admitted, itself included)
//	joined   S→C        rank, kind, fingerprint?, host?  (a late rank joined the formed job; see Growth)
//	signal   C→S→C      to, from, kind (sdp-offer|sdp-answer|ice-candidate|connect|link), payload (JSON value)
//	path     C→S        peer, local, remote, rttMicros?  (how a link reached peer: ICE candidate types,
//	                                                 or memory|shm|unix for a same-host link)
//	abort    C→S        code, where?                (the sender called Abort: it leaves, the job ends)
//	suspect  C→S        rank, reason?               (the sender lost its link to rank; see Failure knowledge)
//	leaving  C→S                                     (the sender finalizes: the links it closes next are no failure)
//	left     S→C        rank, reason?, also?, aborted?, code?  (ranks' connections are gone; see Departures;
//	                                                 aborted: the rank called Abort with code)
//	error    S→C        code, message?              (then a close, unless code is rank-absent)
//	publish  C→S        service, port               (MPI_Publish_name: name port for the job; see Names)
//	unpublish C→S       service                     (MPI_Unpublish_name)
//	lookup   C→S        service, wait?              (MPI_Lookup_name; wait: answer once it is published)
//	name     S→C        op (publish|unpublish|lookup), service, port?, code?, message?
//	                                                 (the answer to each of the three: port for a found
//	                                                 lookup, code name-taken|name-unknown|name-limit on failure)
//	telemetry C→S       now (unix µs), ops?[], links?[], console?[], dropped?  (what the rank did
//	                                                 since its last report; see Telemetry)
//	  op                {op, comm?, peer?, bytes?, start, end, err?}  (start, end: unix µs)
//	  link              {peer, local?, remote?, rttMicros?, sent?, received?}
//	  console           {stream (out|err), text}
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
//	                         ◀───  joined{rank}           a late rank joined (a job that grows)
//	                         ◀───  error{job-failed}      a seated job lost a rank before it formed
//	  publish{service, port} ───▶  name it in the sender's job
//	                         ◀───  name{op: publish, service}
//	  lookup{service}        ───▶  (from any rank of the job, a late one too)
//	                         ◀───  name{op: lookup, service, port}
//
// The first message must be a join (within Config.JoinTimeout). A seat
// token's rank is the one it names; an open token's is the requested one if
// free, else the next free one. A job accepts joins until it is ready
// (one that may grow accepts late ranks after, see Growth); after that a
// freed rank stays vacant (a lost rank is a failed process, not a seat to
// refill).
//
// # Tokens
//
// A token is base64url(JSON claims) "." base64url(HMAC-SHA256(secret,
// domain || claims)); the claims are the job id, its size N, the expiry (unix
// seconds), the job settings, in a seat token the rank it admits ("r"),
// and in the tokens of a job that may grow its max ("m") and, in a late
// token, the late flag ("l"; see Growth). Mint them with Mint/MintSeats, the `signal token` command, POST
// /admin/token (Config.AdminKey) or Local.SeatTokens. All ranks of a job must
// present tokens with the same size, max and settings, and all seat tokens
// or all open ones (else job-mismatch; the one exception is the late ranks
// of a seated job, see Growth).
//
// A seat token admits one rank: a join with it takes that rank (asking for
// "any rank" means that one; asking for another is bad-rank), so a rank
// process cannot be robbed of its seat by a joiner with another rank's
// token, and a token that leaks (it sits in a rank's environment, or in a
// run page's URL) costs that one seat. The seat is inside the MAC: a token
// whose seat was rewritten or removed is bad-token. Launchers (meshrun, the
// lab page, Local) mint one per rank. An open token admits anyone to any
// free rank: the explicit choice (`signal token -open`, "open" at the admin
// endpoint) for jobs of volunteers, such as browser tabs, that come and go
// until the job forms.
//
// # Growth
//
// A job whose tokens have a max M above their size N (Claims.Max; `signal
// token -max M`) may grow: N is a minimum, M a limit. It forms as any
// other when its N ranks are present (ranks 0…N-1, its world: Ready goes to
// them, with max), and a join before that takes a free seat of the world
// as before. Once it formed, a join with an open token of the job is
// admitted as its next late rank, N, N+1, … in the order they come, up to
// M-1; past that it is refused, job-full ("job full: 8 of 8 ranks"). A late
// rank's number is never given again: one that left, or was declared
// failed, is a failed process, like any rank of a formed job, and asking
// for its number again is refused (declared-failed when it was declared
// failed, else job-full); a late join asks for no rank.
//
// A seat token names a seat of the world (below N), so late ranks join
// with open tokens of the job, also those of a seated (launcher's) job.
// There they come with a late token (Claims.Late, `signal token -late`):
// an open token that admits late ranks only and is refused, not-formed
// (ErrNotFormed; a later try may succeed), while the job has not formed,
// also when nobody has joined it yet, so a rank that joins too early
// cannot create the job as an open one under the launcher's ranks. A
// plain open token of a seated job that grows is refused as not-formed
// too while the job forms, and admitted late once it formed.
//
// What the ranks are told:
//
//   - the late rank: welcome{rank, size: N, max: M, late: true}, then at
//     once ready{size: N, max: M, kinds, fingerprints?, hosts?} whose kinds,
//     fingerprints and hosts cover every rank admitted so far, itself included
//     (ranks 0…rank), then, if some of those ranks have left already, one
//     left{rank, also} naming them ("left the job before this rank
//     joined");
//   - every other rank present: joined{rank, kind, fingerprint?, host?}, one
//     message per rank (O(N) per arrival), after which the server vouches
//     for the late rank's fingerprint as Ready does for the world's;
//   - the world's ranks got max in their welcome and ready, so every
//     rank can size its tables for M ranks from the start.
//
// Signals go between late and world ranks both ways as between world
// ranks (stamped with the sender's rank); a signal to a rank below M the
// job has not admitted yet gets rank-absent (not fatal), one to M or
// beyond bad-rank. A late rank's departure is announced as any other
// (left, batched; see Departures), with the same fail-stop rules (see
// Failure knowledge): it may report a peer lost and be reported, be
// declared failed, and then is refused. It never fails or ends the job:
// the job ends when every rank, late or not, has left. After a rank
// called Abort no late rank joins (job-ended). A job without a max (or
// with max N) behaves as before: its messages carry no max, and a join
// once it formed is job-full ("job already started").
//
// # Identity
//
// A rank may announce its DTLS certificate's fingerprint in its join; the
// server vouches for it to the other ranks in Ready (fingerprints[r]).
// Ranks use one certificate for all their links and refuse a link whose
// remote description names another certificate than the one vouched for
// its rank (package peer, ErrIdentity): DTLS proves the remote holds the
// certificate's key, the seat token proves the announcement came from the
// rank's holder. The server stamps every relayed signal with its sender's
// rank, so a member cannot send set-up messages or ICE candidates in
// another rank's name; a rank applies a signal only to its link with the
// sender. With open tokens the fingerprint binds a link to whoever took
// the seat, not to a particular person.
//
// A rank may also announce a host identity (join's host; LocalHost by
// default: a hash of the boot id, uid and network namespace natively, none
// in a browser), which the server passes on as it does fingerprints
// (ready's hosts[r], joined's host). It is a hint, not a credential: ranks
// with equal hosts try a same-host link (package mesh), whose own
// handshake checks the peer (same uid, a secret sent over this server).
//
// # Job life
//
// A job is forming until its N ranks are present, formed (ready sent) until
// its last rank (of its world or a late one) leaves, and then over. A departure while forming:
//
//   - seated job: fails it. Its seats belong to processes a launcher
//     started, and one of them is gone for good: every member gets
//     error{job-failed} and a close at once, instead of waiting out its
//     join timeout.
//   - open job: frees the seat for the next volunteer; the others get
//     left{rank} and go on waiting.
//
// The server remembers a job that failed, or formed and ended, until the
// latest expiry of its members' tokens (at most Config.MaxEndedJobs of them,
// the oldest dropped first): a later join gets job-failed or job-ended (both
// wrap ErrJobGone) instead of forming the job again without its lost ranks.
// An open job that empties while forming is forgotten, as volunteers may
// form it afresh.
//
// # Departures
//
// A formed job's first departure goes to every rank at once: the job's
// failure notice. Later ones are batched: left{rank, also: [ranks…]} goes
// to every member still present 50 ms after the departure that opened the
// batch, each batch's wait doubling up to 1 s. Every rank hears of every
// departure — a rank waiting to receive from a departed rank it never
// linked to has no other way to learn — within a second, and a job whose
// ranks leave together costs a few notices per rank, where telling every
// rank of each departure cost N²/2 (N departures over T seconds cost at
// most N·(6+T)). A rank that signals a departed rank gets left{rank} in
// answer (not rank-absent), in case its batch is still on its way.
//
// # Failure knowledge
//
// Failures are fail-stop: once the server counts a rank of a formed job
// as failed, it stays failed. The server learns of a failure three ways:
// the rank's connection closes without Finalize (a crash, SIGKILL), the
// rank stops answering pings (SIGSTOP, a hung host: see Enforcement), or
// another rank reports that it lost its link to it, suspect{rank, reason}
// (the link closed, ICE did not reconnect, SCTP aborted), which the
// server may not see itself: the rank may be frozen, or only the path
// between the two broken. Package mesh sends that report for every link
// its endpoint loses.
//
// A suspect report declares the rank failed unless it leaves on its own
// within two seconds (a rank that finalizes closes its links before its
// connection), or said it is leaving (leaving, which a finalizing rank
// sends before it closes its links); so does a missed pong. A declared rank's departure is
// announced like any other (left, reason "declared failed: rank 1 lost
// its link to it (…)" or "declared failed: no answer to pings within
// 3s"); the rank itself gets error{declared-failed} ("rank 3 was declared
// failed: …", ErrDeclaredFailed) and a close, so a frozen rank that
// resumes ends with that error rather than carrying on alone; and its
// seat refuses it from then on ("rank 3 was declared failed and cannot
// rejoin the job"). One report suffices: a member already runs the job's
// program, and a broken link between two ranks leaves one of them unable
// to take part whatever a vote says (RATIONALE.md). Reports name ranks of
// the reporter's own job only, a report about a rank already gone or
// already reported changes nothing, reports about oneself or outside the
// job are bad-rank (not fatal), and they count against the message rate
// like any message. Config.Departed tells a launcher of every departure,
// declared or not, as it is announced.
//
// # Names
//
// Each job has a name service of its own, for MPI_Publish_name,
// MPI_Unpublish_name and MPI_Lookup_name: a rank publishes a port under a
// service name (publish{service, port}), and any rank of the same job,
// also one that joins it later (see Growth), looks it up (lookup{service})
// to connect to it. Service and port are 1 to MaxNameLen (256) bytes of
// UTF-8 each, opaque to the server; names of one job are invisible to
// every other. Only a joined rank may use them: a request before the join
// is a protocol error (and a close), as a signal is.
//
// The server answers every request with exactly one name{op, service},
// op the request's type, in the order the answers become available; a
// client correlates them by op and service. A failure carries a code and
// leaves the connection up (Name.Err wraps ErrNameTaken, ErrNameUnknown or
// ErrNameLimit):
//
//   - publish: of a service the job has published already, name-taken
//     (the first name stays); past MaxNames (64) services in the job,
//     name-limit.
//   - unpublish: any rank of the job removes any of its names; a service
//     not published is name-unknown.
//   - lookup: a published service's answer carries its port; one not
//     published is name-unknown, unless the lookup says wait: then it is
//     parked and answered by the publish of that service (after the
//     publisher's own answer), however long that takes. A connection parks
//     at most MaxWaitingLookups (16) at once; the next is name-limit.
//
// Names live as long as the rank that published them: when it leaves the
// job for any reason (Finalize, a crash, Abort, declared failed) its names
// are removed, since its ports died with it, before its departure is
// announced, so a rank that heard of it (left) and looks the service up
// gets name-unknown. Lookups parked for such a service wait on, for
// another rank to publish it. A departing rank's own parked lookups are
// dropped. The job's names end with the job. The requests count against
// the message rate like any message; Stats counts the names published and
// the answers sent, and the server logs every publish and unpublish.
//
// # Telemetry
//
// A rank of a job whose settings turn telemetry on (telemetry=1; the root
// package reads it) reports what it does: telemetry{now, ops, links,
// console, dropped} every interval, over its signaling connection. An op
// is one MPI operation it completed (its lower-case name without an I or
// Init prefix, the communicator's name, the peer in world numbering for
// point-to-point, the payload bytes of its side, its start and end in
// unix µs on the rank's clock, the error it failed with); a link the state
// of its link to a peer (candidate types, round trip, cumulative bytes
// sent and received); a console line one line of its standard output or
// error, at most MaxConsoleLineLen (1 KiB) bytes of UTF-8 (ClipText).
// Dropped counts the ops it recorded but could not report. A message
// holds at most MaxTelemetryOps (1,024) ops, MaxTelemetryLinks (256) links
// and MaxTelemetryConsole (256) console lines, and the message size and
// rate limits hold as for any message: a rank splits a larger report.
// Anything else is bad-message, as is a telemetry before the join
// (protocol). Under GOOS=js telemetry is encoded, never decoded.
//
// # Views
//
// The server keeps a record of each job for dashboards, whether or not
// its ranks send telemetry: its state (JobView.State: forming, formed,
// over, failed, ended), each rank's kind, agent (Join.Agent) and state
// (RankView.State: joined, ready, finalized, failed, aborted, left) with
// its reason and abort code, the last report of each link, each rank's
// last Config.ConsoleTail console lines, and a ring of events: every rank
// state change, every job state change, and the ranks' operations,
// console lines and link changes (a link's report becomes an event when
// its path changed or once a second). An operation's times are shifted
// onto the server's clock by the report's arrival less its now, so ranks
// whose clocks disagree line up.
//
// View returns the record as it is now, with the seq of the last event it
// includes; Events returns the events after a seq and a channel closed at
// the next one, so a viewer follows a job without polling; when the ring
// overwrote events a viewer had not read, Events starts with a gap event,
// and the viewer reads View again. Jobs lists the records. The record
// is made at the job's first event (its first join), kept while the
// server remembers the job (an ended job until its tokens expire, at most
// Config.MaxEndedJobs of them), and forgotten with it: an open job that
// empties while forming is forgotten at once.
//
// EndJob ends a job from outside (an organizer, a time limit): every
// member gets error{job-ended} with the reason and a close, and the job is
// remembered as ended, so a later join is refused with job-ended (also
// when nobody had joined it yet). Telemetry a rank sends after that is
// ignored.
//
// # Enforcement
//
// The server stamps every relayed signal's from with the sender's rank, so no
// rank speaks as another; it relays only inside the sender's job. These get an
// error message and a close, and leave every other connection alone:
// undecodable or invalid messages (bad-message), messages over the size limit
// (too-large, closed without a handshake), more than Config.MessageRate
// messages per second after a burst of Config.MessageBurst (rate-limited),
// server-only messages, a second join, or a signal, report, name
// request or telemetry before join (protocol), bad, expired or foreign tokens
// (bad-token, expired-token), a signal to a rank
// outside [0, M) (M = N for a job that cannot grow) or to oneself
// (bad-rank), taken ranks, full jobs, a late token too early (not-formed)
// and the server limits on jobs, connections and job size (a token's size
// or max above Config.MaxJobSize: job-mismatch). A signal to a rank of the
// job that is not connected gets a rank-absent error but no close (once the
// job formed, a left for a rank that left). Browser origins are checked against
// Config.OriginPatterns during the upgrade (403).
// The welcome tells the client the rate limit, and Client.Send paces itself
// inside it (with a margin), so a rank that opens many connections at once
// slows down rather than being cut off.
// The server pings a connection it has not heard from for
// Config.PingInterval (5 s; native clients beat every 0.9 PingInterval,
// Limits.HeartbeatMillis, so only browser ranks and late beats draw
// pings); a rank of a formed job that does not answer within
// Config.PingTimeout (3 s) is declared failed (see Failure knowledge), so
// a frozen rank (SIGSTOP) is gone for the server, its /metrics and its
// peers within 8 s. Any other socket has 4 PingTimeouts to answer, then it
// is dropped and announced as left ("no answer to pings"): a rank whose
// job is still forming fails the formation when it goes, and no
// computation waits on it yet, so a tab still loading on a busy machine
// gets the benefit of the doubt. A ping runs beside the connection's
// reader and costs one control frame each way.
//
// # Limits
//
// What the server holds at most, and the test that holds it:
//
//	connections          Config.MaxConns websockets (10,000), beyond: too-many-conns        TestServerLimits
//	jobs                 Config.MaxJobs forming or formed (1,000): too-many-jobs            TestServerLimits
//	ranks per job        Config.MaxJobSize (1,024; at most MaxJobSize 65,536), max included TestServerLimits,
//	                                                                                        TestGrowthRefusals
//	late ranks           max − size per job, numbers never reused: job-full                 TestGrowth
//	ended jobs           Config.MaxEndedJobs (10,000), oldest dropped                       TestEndedJobsBounded
//	message in           Config.MaxMessageBytes (64 KiB): too-large                         TestViolations
//	message rate in      Config.MessageRate/s (50) after Config.MessageBurst (200)          TestViolations
//	queue out            Config.SendQueue messages (1,024) and Config.SendQueueBytes
//	                     (1 MiB) per connection: slow-consumer                              TestSlowConsumerBytes
//	goroutines           1 per idle connection (its reader; a writer while it writes)       TestJoinedConnMemory
//	memory               about 12 KiB per idle joined connection (docs/signaling-load.md)   TestJoinedConnMemory
//	unjoined connection  Config.JoinTimeout (10 s): join-timeout                            TestJoinTimeout
//	frozen peer          Config.PingInterval + Config.PingTimeout (8 s)                     TestFrozenRankDeclaredGone
//	suspect reports      one pending declaration per rank of a job                          TestSuspectDeclaresFailed
//	departure notices    N per batch, batches 50 ms … 1 s apart (see Departures)            TestDeparturesCostLinearMessages,
//	                                                                                        TestEveryDepartureReachesEveryone
//	arrival notices      one joined per rank present, per late rank (see Growth)            TestGrowth
//	names                MaxNames (64) services per job, service and port MaxNameLen
//	                     (256 bytes) each: name-limit (the connection stays up)             TestNameLimits
//	parked lookups       MaxWaitingLookups (16) per connection: name-limit                  TestNameLimits
//	telemetry message    MaxTelemetryOps (1,024) ops, MaxTelemetryLinks (256) links,
//	                     MaxTelemetryConsole (256) lines of MaxConsoleLineLen (1 KiB):
//	                     bad-message                                                        TestTelemetryViolations
//	job events           Config.TelemetryEvents (16,384) per job, oldest overwritten (gap)  TestTelemetryRingWraps
//	job record bytes     Config.TelemetryBytes (8 MiB) per job, Config.TelemetryTotalBytes
//	                     (256 MiB) for all: oldest events go first, ended jobs' before live
//	                     ones'; ranks and links (below) counted beside                      TestTelemetryBytesBounded
//	console tail         Config.ConsoleTail (200) lines per rank                            TestTelemetryBytesBounded
//	links in a view      128·127 per job; reports of more are ignored                       TestTelemetryLinksBounded
//	job records          one per job held or remembered (MaxJobs + MaxEndedJobs)            TestTelemetryBytesBounded
//
// HTTP connections that are not websockets are the http.Server's: with
// NewHTTPServer, an idle keep-alive connection closes after 30 s
// (TestIdleKeepAliveClosed in cmd/signal), a request must arrive within 30
// s and its answer leave within 2 minutes.
//
// # Clusters
//
// Servers given a Bus (Config.Cluster; package natsbus over NATS, `signal
// serve -nats URL` or `-nats-embedded`) form a cluster: a rank may join
// any of them. Each job has one home server, agreed through the bus (the
// first server a join reaches claims it); the others bridge their ranks'
// websockets to the home (the rank's messages go there as they came, the
// home's answers come back) so the job's hub state — seats, names,
// failures, growth — lives in one place and the protocol is unchanged. The
// home saves the job's state on the bus (a moment after each change, and
// before Ready goes out).
//
// A cluster's Welcome carries the seat's resume key (a MAC of the job,
// its size and expiry and the rank under the servers' shared secret: any
// server checks it, no state needed). A client given several server URLs
// (comma-separated) reconnects when its server is lost, or tells it to
// move (drain), and joins with resume: its seat, its queued messages and
// its names are handed over, its links are untouched. A server that
// stops beating on the bus is lost for the others within its timeout
// (3 s by default): seats of the ranks it held wait ResumeGrace (15 s)
// for them, and the jobs it was home of move to the first live server
// that needs them, which loads their state; a seat the state is too old
// to hold is taken back on its key alone. Messages in flight at the loss
// (sent to or through the lost server, up to its detection) are lost: a
// link set-up caught in it fails as with a lost peer, and links set up
// after the loss work (TestClusterServerKilled). A server that drains
// (Drain, SIGTERM) saves its jobs, leaves the bus at once and moves its
// ranks. Known limits: a job that ended is remembered by its home only;
// viewers' records (Telemetry) stay with the server that made them.
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
// a connection without a closing handshake; Close waits at most 5 s for it;
// Encode refuses the messages only the server sends (welcome, ready,
// joined, left, error, name), whose encoders stay out of browser ranks
// (proto_server.go): a browser decodes them, never writes one; and it
// encodes telemetry but never decodes one (proto_telemetry_server.go).
//
// The Server, Local and tokens (Mint, VerifyToken, Claims) are not built
// under js: a page cannot listen, and leaving them out keeps net/http and
// crypto out of browser ranks.
package signaling
