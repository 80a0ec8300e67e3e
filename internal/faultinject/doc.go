// Package faultinject is meshmpi's fault-injection harness: it starts a
// job through meshrun, kills (SIGKILL) or freezes (SIGSTOP) one rank at
// a random moment of a random operation, and records what became of the
// others.
//
// A Plan is one run: the job's kind (native ranks of one meshrun -n N
// --native; WASI ranks or a mix of WASI and native ranks, each in a
// meshrun join of its own on the harness's signaling server), the fault,
// the victim, the phase (job formation, the operation's loop, Finalize)
// and, for the loop, the operation (point-to-point or one of each
// collective family) in one of three forms (blocking, nonblocking,
// persistent, whose loop restarts the same requests). Every rank runs the
// workload program (faultinject/workload), which reports its progress on
// standard output; meshrun -v logs each rank's start and end.
//
// Runner.Run makes a run and returns its Result: whether every survivor
// ended with an error of its own (not success, not meshrun's teardown,
// not a hang), the time from the fault to the last survivor's exit, and
// meshrun's report. A survivor may succeed only when the victim was struck
// in Finalize (which may be over for the others by then) or had ended
// already. Summary adds results up.
//
// The short run is this package's test (TestFaults, 50 runs);
// cmd/meshfault is the long one.
//
// Formation faults in WASI and mixed jobs strike once the victim has
// joined the harness's server: ranks started by launchers of their own
// cannot tell a rank that died before it reached the server from one that
// has not started yet, and wait for it until their join timeout. A native
// job's meshrun starts every rank itself and sees one die at any moment,
// so its formation faults strike from the victim's start.
package faultinject
