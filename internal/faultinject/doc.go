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
// A ulfm run (RandomULFMPlan) tests the fault-tolerant calls instead:
// the job runs under meshrun --keep-going (and, on the harness's server,
// with the keep-going job setting), and every rank runs rounds of Revoke,
// Agree and Shrink on a communicator that shrinks each round (ULFMOp
// says what each round does, and every process can recompute it). The
// fault strikes during formation, at a step (Revoke, Agree, Shrink) of
// a random round, or in Finalize. Result.Verdict judges it by the
// fault-tolerant contract: every survivor exits 0 having printed every
// round, the survivors printed identical lines for each round (no
// disagreement), each agreed value holds every survivor's flag and each
// shrunk group every survivor, and meshrun lists a native victim as
// failed. A fault that strikes before the job formed may fail the job
// instead: a job that never formed has nothing to shrink, and every
// survivor ending with an error is accepted then.
//
// An example run (RandomExamplePlan) faults one of the fault-tolerant
// examples instead, examples/resilient (a heat iteration that revokes,
// shrinks and rolls back to in-memory checkpoints) or examples/farm (a
// manager that requeues a failed worker's task), under meshrun
// --keep-going, built by BuildExamples natively and for wasip1. The
// fault strikes a random rank (a worker of the farm: the manager's loss
// ends it by design) a random delay after rank 0's first line, while
// the example computes, sized to take about 0.5 to 2 s unfaulted
// (Plan.Estimate). Result.ExampleVerdict judges it: every survivor exits
// 0, a rank prints "ok" and the example's check against its sequential
// run passed, the example lists no rank as failed but the victim, and
// meshrun lists a native victim as failed, unless the computation was
// over before the fault (Result.Missed).
//
// The short runs are this package's tests (TestFaults, 50 runs of each
// kind; TestExampleFaults, 10 example runs); cmd/meshfault is the long
// one (-ops ulfm for ulfm runs, -ops examples for example runs).
//
// Formation faults in WASI and mixed jobs strike once the victim has
// joined the harness's server: ranks started by launchers of their own
// cannot tell a rank that died before it reached the server from one that
// has not started yet, and wait for it until their join timeout. A native
// job's meshrun starts every rank itself and sees one die at any moment,
// so its formation faults strike from the victim's start.
package faultinject
