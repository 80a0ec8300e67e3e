// Package agree is the fault-tolerant agreement under ULFM's Comm.Agree
// and Comm.Shrink and the barriers of Finalize and Disconnect: the
// members of a group that survive agree on one value (the bitwise AND of
// the byte vectors they contributed) and on the set of members whose
// contribution it lacks, even when members fail during the agreement,
// the coordinator included.
//
// It sits beside coll and peer, below the root package, and knows neither:
// a Group is a state machine fed with the messages and failure notices of
// one communicator (Receive, Failed) that sends through the small
// Transport its owner provides. Tests drive it over a fabric that delivers
// messages in random order, kills members mid-broadcast and tells each
// survivor of a failure at its own time (agree_test.go).
//
// # The protocol
//
// The failure detector is eventually perfect in effect: every failure
// becomes known to every survivor, and a member that any member believes
// failed is fenced by the job (the signaling server evicts it, a killed
// in-process rank stops), so it is failed for good. On that ground a
// coordinator-based agreement with takeover is enough; its messages go
// along a tree, so no member talks to more than its parent and children
// and an agreement of n members costs 2(n-1) messages without failures
// (a gather to one coordinator had every rank of a 256-rank job dial
// rank 0 at once, and a decision forwarded to every member cost n²):
//
//   - The coordinator of a member is the lowest member it does not know
//     failed: the root of a binomial tree over the members it does not
//     know failed, in which a failed member's children hang from its
//     nearest live ancestor (Group.parentOf).
//   - A member sends its parent the AND of its own contribution and those
//     of its subtree, with the set of members they cover, once the set
//     holds every live member of its subtree; again when its parent or
//     coordinator changes or the set grows. Each such message names the
//     coordinator it is for (its era) and counts for that coordinator
//     only.
//   - The coordinator decides once its set holds every member it does not
//     know failed: the AND, with the members outside the set as the
//     missing ones. A member that holds a decision reports it up the tree
//     instead of a contribution (a candidate, passed up at once), and a
//     coordinator that hears of one takes it instead.
//   - The decision goes down the tree, named by the coordinator that
//     announced it; a member takes it only from its current coordinator
//     and passes it to its children before it returns. A decided member
//     keeps the decision: it answers a member the tree moves under it,
//     and reports it up when its coordinator changes, until a later
//     decision says every survivor decided it.
//
// So a coordinator whose set covers a member knows that the member either
// told it the decision it holds, or holds none and will take none from
// an earlier coordinator: the survivors never decide two values.
//
// A member that leaves the group (Leave: its communicator is freed) may
// hold a decision no other survivor has: it took it from a coordinator
// that failed mid-broadcast, and the others hear of that failure only
// later, then ask it, their new coordinator or parent. So it keeps
// answering until every other member has told it that it left too (a
// member leaves with all its agreements decided) or failed; it tells
// every member once its own agreements are decided. A group that ran no
// agreement but barriers has nothing to answer for and leaves at once.
//
// A barrier (StartBarrier, for Finalize) is lighter: a decided member
// passes the decision to its children and leaves, keeping nothing; its
// gather is not tied to a coordinator, so the members leaving one after
// another do not make those still waiting send again.
//
// Each message carries the communicator's nonce and the agreement's
// sequence number, so messages of a freed communicator whose context was
// reused are told apart.
package agree
