//go:build unix || windows

// Meshrun launches meshmpi jobs of WASI ranks (under wazero, inside
// meshrun) and native rank processes: it is meshmpi's mpirun.
//
//	meshrun [flags] -n N <package|binary> [args...]
//	meshrun [flags] --max M -n N <package|binary> [args...]
//	meshrun [flags] -n N --signal URL --job ID --token T [--rank R] <package|binary> [args...]
//	meshrun join URL [--job ID --token T] [--rank R] [flags] <package|binary> [args...]
//
// For example, from the repository's root,
//
//	go run ./cmd/meshrun -n 4 ./examples/pi
//
// builds examples/pi for GOOS=wasip1, compiles the module once, runs it as
// 4 WASI ranks under wazero inside meshrun, each joined into one job as its
// own mesh member, and prints "[0] pi ≈ 3.14159…". With --native the same
// package runs as 4 native processes; with --wasi 2 the first 2 ranks run
// under WASI and the other 2 as native processes, in one job.
//
// Ranks link the best way both ends support (package mesh): the WASI ranks
// meshrun hosts through memory links inside meshrun, processes of this
// host (native ranks, or a native rank and meshrun's WASI ranks) through
// shared memory, anything else (a browser tab that joined) over WebRTC.
// --link webrtc makes every pair of meshrun's own job use WebRTC, on
// loopback, as ranks on different hosts would: for tests and benchmarks.
//
// Meshrun is the launcher half of a contract whose other half is in the
// library. Meshrun starts each rank as a process with the job in its
// environment (meshmpi.EnvSignal, EnvJob, EnvToken, EnvRank and, with
// --join-timeout, EnvJoinTimeout); meshmpi.Main and meshmpi.Init read it
// (meshmpi.JobFromEnv), join the job at its signaling server and return
// once every rank is present. The ranks then talk to each other over
// WebRTC data channels; no MPI traffic passes through meshrun. The same
// program run without meshrun runs an in-process world instead, so
// examples/pi works both ways.
//
// # Targets
//
// The target is a Go package (a directory holding .go files, a path that
// starts with ./ or ../, a .go file or an import path), which meshrun
// builds once with go build into a temporary directory it removes at exit
// (for GOOS=wasip1, natively, or both for a mixed job); a wasip1 module
// (.wasm); or an executable file, or a command on PATH, which it runs as
// it is. A package or a module runs as WASI ranks unless --native or
// --wasi K say otherwise; an executable runs as native processes. A
// package must be a main package: meshrun -n 2 ./signaling says
// "./signaling is not a main package" and exits with 2.
//
// As with go run, a package named by a directory or a .go file builds in
// its own directory, with the go.mod of the module that holds it: a
// user's program builds in the user's module (meshrun -n 4 . from the
// package, or a path into the module from anywhere), so an installed
// meshrun (go install github.com/meshmpi/meshmpi/cmd/meshrun@latest)
// works in any directory. An import path builds in meshrun's working
// directory's module.
//
// # Memory
//
// Before it builds anything, meshrun estimates the job's memory by the
// kind of its ranks (about 20 MiB a native rank process, 25 MiB a WASI
// rank inside meshrun plus 100 MiB once for the WASI runtime: figures
// measured with linked ranks, in memguard.go) and, on Linux, refuses a
// job that needs more than the host's available memory (MemAvailable in
// /proc/meminfo), with exit status 2:
//
//	meshrun: -n 5000: the job needs about 97.7 GiB (5000 native rank(s) × 20 MiB), more than the 22.4 GiB this host has available: run fewer ranks, or --mem-check=false to start it anyway
//
// --mem-check=false starts it anyway. Elsewhere meshrun cannot tell and
// starts every job.
//
// # WASI ranks
//
// A WASI rank is a guest of meshrun's embedded wazero runtime: meshrun
// compiles the module once per job (wazero's compilation cache, in the
// user's cache directory, makes a later start take tens of milliseconds
// instead of a second) and instantiates it once per rank, with the
// program's arguments, meshrun's environment, real clocks and a
// pre-opened loopback socket through which meshrun joins the job for the
// rank and relays its links (package wasm/host). The guest's exit code is
// the rank's exit status; a guest that traps ends with 134. Stopping a
// WASI rank (SIGTERM or SIGKILL in the teardown below) ends it at once.
// --runtime picks the WASI runtime: wazero (the default, pure Go) or
// wasmtime (through wasmtime-go, in a meshrun built with cgo; package
// wasm/wasmtime), which reaches the guest through the meshmpi host
// functions instead of a socket and caches its machine code beside
// wazero's. Mixes with --native and --wasi work the same on both.
// Flags go before the target; every argument after it goes to each rank
// unchanged, except a -- right after the target, which ends meshrun's
// command line (meshrun -n 2 ./prog -- -n 5 gives each rank -n 5; a
// further -- is the program's). A -- before the target ends meshrun's
// flags, as with mpiexec (meshrun -n 2 -- ./prog -x). The ranks'
// standard input is /dev/null.
//
// # Jobs
//
// Without --signal, meshrun starts an embedded signaling server on a free
// loopback port (signaling.ListenLocal), mints a seat token for each rank of
// a fresh job of N ranks (rank r's admits rank r only; a rank that dies
// before the job forms fails it at once) and starts ranks 0 … N-1. The
// tokens' settings keep every
// connection on the loopback interface (net=loopback) and carry the
// algorithms forced with --coll (coll.allreduce=ring, …); ranks receive them
// at join.
//
// With --signal, --job and --token, the N processes join an existing job on
// another server instead, as ranks R … R+N-1 with --rank R or as whatever
// ranks the server assigns: the rest of the job may run elsewhere. join is
// the same for a single process.
//
// # Jobs that grow
//
// With --max M (M > N) meshrun's own job may grow to M ranks (package
// signaling, Growth): it forms with ranks 0 … N-1 as any other, and then
// admits late ranks N, N+1, … up to M-1, in the order they join, each
// with the job's late token, which meshrun mints beside the seat tokens
// (the same job, size, max, settings and expiry; signaling.Claims.Late).
// Before it starts a rank meshrun prints, on stderr, how to join:
//
//	meshrun: join this job: meshrun join 'ws://127.0.0.1:41234/ws?job=meshrun-…&token=…' ./prog
//	meshrun: browser join link: http://127.0.0.1:41235/run?example=prog&job=…&mic=1&token=…
//
// The first is the job's join URL, the one string a late rank needs: the
// server's websocket URL with the job and the token in its query,
//
//	ws://HOST:PORT/ws?job=ID&token=T
//
// which meshrun join (and --signal) take apart again; --job and --token,
// when given too, win over the URL's. The second is the browser's run
// page (package web) of a server meshrun starts beside the embedded one
// on another loopback port, with the embedded server's /ws, as signal
// serve does: meshrun builds a package target for GOOS=js too (when it
// does not build, meshrun says so and the job runs without a link), and
// the page runs it as a late rank (mic=1: the page holds the microphone,
// so that the browser offers its plain loopback address rather than an
// mDNS name). An executable or a module has no browser link. With
// --join-info FILE meshrun also writes both to FILE, for tests and
// scripts, as one JSON object: {"join": "ws://…", "browser": "http://…"}
// ("browser" absent when there is none), written whole (a rename) before
// any rank starts.
//
// Late ranks are not meshrun's children: it waits for its own N ranks,
// its exit status is theirs, and --keep-going's accounting, the
// teardown after a failure and the seats meshrun vacates concern its own
// ranks only (a late rank's departure is the server's to announce, and
// fails nothing of meshrun's). The embedded server lives as long as
// meshrun: a late rank that outlives meshrun's ranks loses its signaling
// server when meshrun exits.
//
// A late rank that comes too early, before the job formed, is refused
// (not-formed; signaling.ErrNotFormed). A WASI rank of meshrun join (or
// --signal) is joined for the guest by meshrun, which then runs the
// guest again after a doubling wait (100 ms … 2 s) until --join-timeout
// after its start, dropping the refused guest's output, and says so once
// ("rank join 0: job J has not formed yet: joining again until it has"). A
// native rank process joins by itself: meshmpi.Init's error wraps
// signaling.ErrNotFormed, and the process decides. The run page loads
// itself again a few times (web/run.js).
//
// A late rank's number is the server's choice. The lines of a WASI rank
// whose rank the server assigns (meshrun join without --rank) wait until
// its host has joined the job and carry its rank ("[2] "), and so do
// meshrun's messages about it; a native rank process's are labelled
// "join" and its place among meshrun's processes ("[join 0] ", and
// "rank join 0" in meshrun's messages), as meshrun cannot see the rank
// it got: the process knows it (Comm.Rank) and may print it.
//
// # Output and exit status
//
// Every line a rank writes is prefixed with its rank ("[2] ") and goes to
// meshrun's standard output or standard error, as the rank wrote it; lines
// of different ranks never mix, and a last line without a newline is
// flushed when the rank exits. A rank process whose rank meshrun does
// not know (joined without --rank) is labelled "join" and its place
// among meshrun's processes ("[join 0] "); a WASI rank's lines wait until
// its host has joined and carry the rank it got (see Jobs that grow).
//
// With --output-dir DIR (Open MPI's --output-filename) each rank's
// standard output and error also go, as the rank wrote them (without the
// prefix), to DIR/rank.N.stdout and DIR/rank.N.stderr, for native and
// WASI ranks alike; meshrun creates DIR (a DIR it cannot create is a
// usage error) and replaces files of an earlier run. A native process
// whose rank meshrun does not know writes DIR/join.I.stdout and
// .stderr; a WASI rank's files are renamed rank.N.* once its host
// joined as rank N. A file that cannot be written is reported once, and
// the terminal keeps the rank's output.
//
// Meshrun exits with the worst (highest) exit status of its ranks: 0 when
// all succeeded, 128+n for a rank killed by signal n, 127 for a rank that
// could not start. When a rank fails, the others get a grace period
// (--grace) to fail on their own, as the library makes them do when a peer
// leaves; then meshrun sends them SIGTERM and, after another grace period,
// SIGKILL. Ranks that meshrun had to stop do not count towards the exit
// status.
//
// With --keep-going a failed rank does not end the job: meshrun says so
// ("rank 2 exited with status 3 (--keep-going: the other ranks carry
// on)") and leaves the others alone, for a program that handles the loss
// of a rank itself (ULFM's Revoke, Shrink and Agree). Its exit status is
// then the program's own result: the worst status of the ranks that did
// not fail, 0 when every survivor succeeded. A rank failed if the
// signaling server declared it failed (a peer lost its link to it, or it
// stopped answering pings) or if it ended with a nonzero status without
// leaving the job cleanly (a crash, a signal, an exit without Finalize);
// a rank that finalized and then exited nonzero (or was stopped, and
// killed by meshrun) is a survivor with that status. At the end meshrun lists each failed rank, how it ended and
// when and why the job was told ("rank 2 failed: was killed by signal 9
// (killed); left the job at 12:01:03.120 (connection lost: …)", "…;
// declared failed at 12:01:09.481 (no answer to pings within 3s)"). In a
// job on another server (--signal), whose departures meshrun does not
// see, and for a WASI rank, whose host leaves the job cleanly for it
// however the guest ended, a nonzero status counts as a failure. A stopped rank is still
// killed after --grace: the job goes on without it.
//
// A rank of meshrun's own job that fails before the job formed may never
// have reached the signaling server, and the others would wait for it
// until their join timeout: meshrun, which holds the rank's seat token,
// takes its seat and leaves it at once, on which the server fails the
// job for every rank ("rank 2 left before the job formed"), so they fail
// within moments. (A rank that had joined is known to the server; the
// visit is refused and changes nothing.)
//
// A rank process stopped by a signal (SIGSTOP; on Linux, where meshrun
// reads the state of its children when the kernel sends it SIGCHLD)
// cannot answer its peers: meshrun reports at once that it stopped
// responding, kills it if it is still stopped after --grace (or as soon
// as the job is failing and only stopped ranks are left), so that its
// peers see it leave, and names it as the cause of the other ranks'
// failures ("rank 1 exited with status 1, after rank 3 stopped
// responding"; "the job failed because rank 3 stopped responding"). A
// rank stopped by a tracer (a debugger) is left alone. Meshrun's SIGTERM
// is followed by SIGCONT, so that a stopped rank acts on it.
//
// SIGINT, SIGTERM or SIGHUP to meshrun sends the ranks SIGTERM at
// once, with the same escalation (a second signal kills them), and meshrun
// exits with 128+signal (130 for SIGINT): the job ends within two
// --grace periods whatever it is doing. A signal while go build runs
// interrupts it; one while meshrun compiles the WASI module leaves the
// compile behind ("terminated: stopping (the WASI module was still
// compiling)"); one while the ranks are still starting (a large -n)
// starts no more of them and stops those started. Under --timeout D every rank
// (native or WASI) gets meshmpi.EnvTimeout: D after the job formed it
// prints what it is blocked in ("meshmpi: rank 2 timed out after 10s
// (MESHMPI_TIMEOUT): Recv(from rank 1, tag 7) on world: waiting for a
// message from rank 1") and exits with 124; a job that outlives that by
// meshmpi.TimeoutLinger and a few seconds is stopped the same way as by a
// signal, and meshrun exits with 124. A target that does not
// build, or bad arguments, exit with 2.
//
// # Hang reports
//
// SIGQUIT to meshrun (Ctrl-\) asks every rank what it is blocked in,
// without ending the job; so does --report-hang D, once no rank wrote a
// line for D (and again after the next quiet D if a rank did not
// answer, or could not be asked yet, as one that has not joined cannot).
// A native rank process gets meshmpi.EnvReport=1 and, when asked,
// meshmpi.ReportSignal (SIGWINCH, which a process not listening
// ignores). A WASI rank has no signals: its host, inside meshrun, sends
// its guest the stream's report message (package wasm), which a guest
// takes once it is in its job (it says report-ready, as the host offered
// in its environment). Either way the library prints the report
// --timeout prints, on the rank's standard error, and the rank carries
// on:
//
//	[2] meshmpi: rank 2 is blocked in Recv(from rank 1, tag 7) on world: waiting for a message from rank 1
//
// Meshrun reads the answers as they pass and, once every rank asked
// answered or after 3 s, gives its verdict:
//
//	meshrun: hang report: every rank is blocked in meshmpi: a deadlock (or a message no rank sends)
//	meshrun: hang report: rank 1 is running, not blocked in meshmpi; rank 3 did not answer within 3s
//
// A WASI guest that has not said it answers cannot be asked: one not in
// its job yet, or one built with a meshmpi from before guests answered
// (its host never sends it a message it does not know). Meshrun names it
// ("rank 0 cannot be asked (a WASI guest that has not said it answers:
// …)"), and when every other rank is blocked says "a deadlock, unless
// rank 0 (not asked) is not". A browser rank, or a late rank of another
// meshrun, is no child of this meshrun and is not asked. On Windows
// there is no SIGQUIT, and no signal to ask a native rank process with:
// such a process "cannot be asked" (--report-hang still asks the WASI
// ranks).
//
// Each rank runs in a process group of its own, so meshrun's signals reach
// its children too. On Linux a rank also gets SIGTERM from the kernel if
// meshrun itself is killed (SIGKILL, out of memory) before it could stop
// the job.
//
// # Windows
//
// Meshrun builds for Windows (amd64 and arm64: CI cross-builds it, its
// tests run on Linux only) and works there as elsewhere, except for what
// Windows lacks:
//   - Ctrl-C or Ctrl-Break (and a closed console, a logoff or a
//     shutdown) stops the job: meshrun kills the rank processes at once
//     (TerminateProcess), as there is no SIGTERM to send them first, and
//     exits with 130. The ranks share meshrun's console, so they see the
//     Ctrl-C themselves too. The teardown after a failed rank and
//     --timeout kill them the same way, after --grace.
//   - There are no process groups: killing a rank does not kill processes
//     the rank started itself, and nothing ends the ranks if meshrun is
//     killed before it could stop them.
//   - There is no SIGSTOP or SIGCHLD: meshrun does not look for stopped
//     ranks (a suspended one is found by its peers, as a lost one).
//   - A package builds to NAME.exe; an executable target is a file whose
//     extension is one of PATHEXT's (.exe, .bat …).
//   - A rank's exit status is its exit code; no rank is "killed by signal n".
//
// Meshrun built without cgo (CGO_ENABLED=0, as the cross-built binaries
// for every platform are) has no wasmtime: --runtime wasmtime fails, after
// building the target, with "this program was built without cgo, which
// wasmtime-go needs" and exit status 2; wazero, native and mixed jobs work
// the same.
package main
