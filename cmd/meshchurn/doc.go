//go:build unix

// Meshchurn is a churn soak: a job whose ranks leave (killed) and join
// every few seconds runs examples/farm for a while, and meshchurn checks
// that no task is lost and that the goroutines, memory and open files of
// the long-lived processes, the signaling server's and the farm's
// manager's, stay flat.
//
//	go run ./cmd/meshchurn -duration 1h -every 3s -workers 4
//
// runs the one-hour soak from the repository's root and stops by itself
// (about a minute after the hour, when the farm has ended); its exit
// status is 0 when every check of the verdict held. CI runs a two-minute
// version (TestChurnSoak; MESHCHURN_DURATION sets another length, -short
// skips it). To keep the hour's output,
//
//	go run ./cmd/meshchurn -duration 1h > /tmp/churn1h.log 2>&1 &
//
// # The soak
//
// Meshchurn builds examples/farm once, natively, into a temporary
// directory (go build in the current directory's module: run it inside
// meshmpi's module, or give a farm executable with -farm). It starts a
// signaling server in its own process (signaling.ListenLocal), so that
// its own figures are the server's, and mints the tokens of one job:
// seat tokens for the world (the manager, rank 0, and -workers workers)
// and a late token (signaling.Claims.Late), with the settings net=loopback
// and keep-going=1 (meshmpi.SettingNetwork, meshmpi.SettingKeepGoing) and
// a max large enough for every rank the soak will admit: late ranks take
// new numbers, never one of a rank that left, so the job may hold
// 1+workers+2·duration/every+64 ranks (at most signaling.MaxJobSize).
//
// It starts every rank as a process of its own, as cmd/meshrun does
// (meshmpi.EnvSignal, EnvJob, EnvToken and, for the world, EnvRank; a
// late rank asks for no rank and gets the server's next):
//
//	manager        farm -for D -stats S -work W -wait 30s -tasks 64
//	world worker   farm -work W
//	late worker    farm -work W -wait 30s        (with the late token)
//
// Once the job formed, every -every (±50%, from -seed) it kills a live
// worker, of the world or a late one (never the manager), with SIGKILL,
// and starts a late worker, which joins the running job and then the
// farm (examples/farm, LookupName and Connect). When no worker is live it
// only starts one. It reaps every process it started; a worker's output
// goes to a file that it reads when the worker ends (the end of an
// unexpected end's output is in the report) and removes, the manager's
// through a pipe it reads as it comes. Churn stops 2 s before the
// manager's -for is over; the manager then finishes the tasks still out,
// stops its workers and checks its answer against a sequential run of
// every task ("answer …, sequential …", "ok"), and late workers that find
// the farm over exit 0 ("the farm is over", "no farm to join").
// Meshchurn waits for every process to end by itself, for at most
// 3 minutes plus the duration, and then kills what is left (hung).
//
// # Samples
//
// Every -sample meshchurn samples its own process, the server's:
// goroutines, the heap in use after a GC (runtime.ReadMemStats HeapAlloc)
// and open files (/proc/self/fd), with the server's counters (connections,
// ranks present). The manager prints its own goroutines, heap (HeapAlloc,
// garbage included: the farm does not collect first) and open files
// every -sample (farm -stats); meshchurn stamps each of those lines with
// the time it came and the workers present in the job then. The first
// sample of each (taken as the job forms, or the manager's first line) is
// the warm-up and counts for nothing. At the end meshchurn prints the
// samples, then for each series (server goroutines, heap and fds, manager
// goroutines, heap and fds) its first and last values, its least-squares
// slope per hour and per live rank (a fit of value = a + b·hours +
// c·live ranks; the time alone when the live ranks hardly vary, or vary
// with the time), its drift and its limit; then the kills, the joins, the
// tasks done, the failed world workers, the late workers that failed,
// the tasks reassigned, the duplicate results and whether the answer
// matched.
//
// # Flat
//
// The two processes hold resources for each live rank: the server two
// goroutines and a socket a connection (three goroutines while a ping
// waits), meshchurn a goroutine and a pidfd a child, the manager a link
// (tens of goroutines, a socket or two and their buffers) to each live
// worker. Churn keeps the live workers at about -workers, but a sample
// may fall while a killed worker's link is still going down or a new
// one's coming up (the manager's goroutines were seen at 102 and at
// 126–132 with 4 workers present, in half the samples of some minutes),
// which the count of ranks present does not see, and the manager's heap
// figure holds whatever garbage it has not collected yet. Such
// transients only ever add to a resource; a leak raises its floor.
// "Flat" is therefore about the floor, at a like count of live ranks. A
// series' drift is the least value of its last third of samples minus
// the least of its first third, over the samples taken at the most common
// count of live ranks (all of them when fewer than two a third are): a
// leak of a goroutine a churn event shows up there as the events between
// the thirds, a transient does not move it. The limits of the drift:
//
//   - goroutines: 10, of the server and of the manager;
//   - open files: 10, of each;
//   - heap: 20% of the first third's floor (what the process held at the
//     start) plus 1 MiB for the server (heap in use after a GC; with an
//     hour's run, a floor that rises by a fifth in 40 minutes fails) and
//     plus 2 MiB for the manager (its figure includes garbage, up to as
//     much again as it holds under GOGC=100, of which the floor keeps a
//     little), plus, for the manager, 2 bytes per task done while it was
//     sampled: the farm keeps a bool of every task it ever made
//     (examples/farm's recorded, whose capacity doubles), a cost that
//     grows with the tasks by the farm's design, not with the churn.
//
// The least-squares slopes are printed for the record (a slope per hour
// of a two-minute run is mostly noise); the verdict uses the drift. A
// series needs 3 samples after the warm-up to be judged: a run shorter
// than 4 samples fails (use a shorter -sample).
//
// # Work
//
// -work is the farm's hash steps per task, about 1.2 ns each. Its default,
// 1000, makes a task about a microsecond of hashing, so the farm is bound
// by the manager's messages (on a 2-core machine, about ten thousand
// tasks a second). The manager's final sequential check costs one core
// all the work every worker did: with tasks of milliseconds that is as
// long as the soak itself (an hour's soak would check for an hour or
// more), with the default a few seconds per minute of soak (7 s after 2
// minutes, 32 s after 10 on a loaded 2-core machine). The churn, not the
// hashing, is what the soak is about.
//
// # Verdict
//
// Meshchurn exits 0, after "PASS", when all of these held, and 1 after
// "FAIL: …" naming those that did not:
//
//   - the job formed within 2 minutes, and the soak was not interrupted;
//   - the manager exited 0 after printing "ok": its answer equals the
//     sequential one, so no task was lost (a duplicate result, from a
//     worker killed after it sent it, is counted, not added);
//   - every worker either exited 0 or was killed by meshchurn;
//   - every process ended by itself after the churn;
//   - each of the six series is flat (see Flat).
//
// Bad flags exit 2. SIGINT, SIGTERM or SIGHUP stop the soak: meshchurn
// kills its ranks, reports what it saw and fails ("interrupted").
//
// Flags:
//
//	-duration D   how long ranks churn (the manager's -for), default 1h
//	-every E      mean interval between churn events, default 3s
//	-workers N    the world's workers, default 4
//	-sample S     sampling period (and the manager's -stats), default 30s
//	-work W       farm hash steps per task, default 1000
//	-seed N       seed of the churn's choices and intervals (printed)
//	-farm PATH    a farm executable instead of building examples/farm
//	-v            print every process started, killed and ended, every
//	              sample and the manager's lines, timestamped, on stderr
//
// Meshchurn runs on Unix systems; the open-file counts need /proc/self/fd
// (Linux) or /dev/fd.
package main
