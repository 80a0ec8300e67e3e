package meshmpi

import (
	"fmt"
	"hash/fnv"
)

// IntercommCreateFromGroups makes an intercommunicator between the groups
// local and remote (MPI_Intercomm_create_from_groups, MPI-4.1 §7.6.2)
// without a communicator over both: the members of local build one over
// local from parent (CreateGroup, collective over local only), and its
// leader meets the remote leader over parent (IntercommCreate). parent is
// a communicator holding every member of both groups (the rank's world
// in the C binding, where groups come from MPI_COMM_WORLD's). Every member
// of both groups calls it, with the same tag string on both sides, and
// with localLeader and remoteLeader ranks in local and remote; the groups
// must be disjoint. A caller outside local, or a leader outside parent,
// is ErrGroup; an empty group is ErrGroup; a tag that differs between
// the leaders is ErrArg (IntercommCreate's check).
//
// The tag string is hashed to the two integer tags the constructions use
// (one for local's construction, the next for the leaders' exchange, so a
// leader's message never matches the other group's construction on
// parent).
func IntercommCreateFromGroups(parent *Comm, local *Group, localLeader int, remote *Group, remoteLeader int, tag string) (*Comm, error) {
	if err := parent.check(); err != nil {
		return nil, fmt.Errorf("intercomm create from groups: %w", err)
	}
	if local == nil || remote == nil || local.Size() == 0 || remote.Size() == 0 {
		return nil, fmt.Errorf("intercomm create from groups: a nil or empty group: %w", ErrGroup)
	}
	if local.Rank() == Undefined {
		return nil, fmt.Errorf("intercomm create from groups: the caller is not in the local group: %w", ErrGroup)
	}
	if localLeader < 0 || localLeader >= local.Size() {
		return nil, fmt.Errorf("intercomm create from groups: local leader %d of a group of %d: %w", localLeader, local.Size(), ErrRank)
	}
	if remoteLeader < 0 || remoteLeader >= remote.Size() {
		return nil, fmt.Errorf("intercomm create from groups: remote leader %d of a group of %d: %w", remoteLeader, remote.Size(), ErrRank)
	}
	pg, err := parent.Group()
	if err != nil {
		return nil, fmt.Errorf("intercomm create from groups: %w", err)
	}
	lr, err := local.TranslateRanks([]int{localLeader}, pg)
	if err != nil {
		return nil, fmt.Errorf("intercomm create from groups: %w", err)
	}
	rr, err := remote.TranslateRanks([]int{remoteLeader}, pg)
	if err != nil {
		return nil, fmt.Errorf("intercomm create from groups: %w", err)
	}
	if lr[0] == Undefined || rr[0] == Undefined {
		return nil, fmt.Errorf("intercomm create from groups: a leader is not in %s: %w", parent, ErrGroup)
	}
	h := fnv.New32a()
	h.Write([]byte(tag))
	t := int(h.Sum32()&(TagUB>>1)) << 1 // even: t for local's construction, t+1 for the leaders
	lc, err := parent.CreateGroup(local, t)
	if err != nil {
		return nil, fmt.Errorf("intercomm create from groups: local group: %w", err)
	}
	ic, err := IntercommCreate(lc, localLeader, parent, rr[0], t+1)
	if ferr := lc.Free(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, fmt.Errorf("intercomm create from groups: %w", err)
	}
	return ic, nil
}
