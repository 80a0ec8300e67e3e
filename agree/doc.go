// Package agree is the fault-tolerant agreement under ULFM's Comm.Agree
// and Comm.Shrink: the members of a group that survive agree on one value
// (the bitwise AND of the byte vectors they contributed) and on the set of
// members whose contribution it lacks, even when members fail during the
// agreement, the coordinator included.
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
// coordinator-based agreement with takeover is enough:
//
//   - The coordinator of a member is the lowest member it does not know
//     failed. A member that enters an agreement sends its contribution to
//     its coordinator, and again to each new coordinator as failures
//     become known.
//   - The coordinator waits for a message from every member it does not
//     know failed, then decides: if one of them reported a decision, that
//     one; otherwise the AND of the contributions, with the members that
//     did not contribute as the missing set. It sends the decision to
//     every member.
//   - A member accepts a decision only from its current coordinator, and
//     when it decides it forwards the decision to every member before it
//     returns. So a later coordinator always hears of a decision that a
//     survivor holds (the holder never sends it anything else), and a
//     member that has moved to a new coordinator never accepts the old
//     one's decision.
//
// A decided member keeps no state: everything it owes others it sent
// before returning. Each message carries the communicator's nonce and the
// agreement's sequence number, so messages of a freed communicator whose
// context was reused are told apart.
package agree
