package node

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// Storage faults: a node whose Raft log cannot be written (its disk is
// full) can still be pinged, so a coordinator would wait a whole step
// timeout for it, and it never learns of the step to say why: it rejects
// the appends that carry it. Such a node tells the leader instead. Its log
// store notes every failed write (faultStore); a loop sends the leader a
// control request with the cause (reportFaults), at most once per
// faultReportEvery; the leader keeps the last report per member
// (memberFaults), and the coordinator's reachability watch ends the step
// for a party with a fresh report at once, naming the cause (watchParty).
//
// What leaves the node is the fault's system error text ("no space left
// on device"), never a path: a member learns that another's disk is full,
// which the step's failure has to name anyway.

// faultReportEvery bounds how often a node tells the leader its log
// store fails; faultFresh is how long the leader believes the last report
// (a few reports' worth: a node whose disk is freed stops reporting).
const (
	faultReportEvery = 500 * time.Millisecond
	faultFresh       = 5 * time.Second
)

// faultStore is the Raft log store with its write failures noted.
type faultStore struct {
	raft.LogStore
	failed chan error // holds the latest unreported failure, if any
	// withhold, if set (by tests only), picks entries the store refuses
	// to write, as if they had not reached this member yet: Raft's leader
	// sends them again, and the refusal is no fault to report.
	withhold atomic.Pointer[func(*raft.Log) bool]
}

// errWithheld refuses a write a test withholds (faultStore.withhold).
var errWithheld = errors.New("entry withheld by a test")

func newFaultStore(s raft.LogStore) *faultStore {
	return &faultStore{LogStore: s, failed: make(chan error, 1)}
}

func (f *faultStore) StoreLog(l *raft.Log) error {
	return f.StoreLogs([]*raft.Log{l})
}

func (f *faultStore) StoreLogs(ls []*raft.Log) error {
	if w := f.withhold.Load(); w != nil && slices.ContainsFunc(ls, *w) {
		return errWithheld
	}
	return f.note(f.LogStore.StoreLogs(ls))
}

// note keeps err for reportFaults without blocking Raft: a failure
// already waiting to be reported stands for this one.
func (f *faultStore) note(err error) error {
	if err != nil {
		select {
		case f.failed <- err:
		default:
		}
	}
	return err
}

// faultText is what a member may read of a storage failure: the system
// error alone ("no space left on device"), without the file's path.
func faultText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return "its Raft log cannot be written: " + errno.Error()
	}
	return "its Raft log cannot be written"
}

// reportFaults sends the leader each noted failure's text, at most once
// per faultReportEvery, until ctx ends. send is given the leader's name.
func (f *faultStore) reportFaults(ctx context.Context, leader func() string, send func(ctx context.Context, leader, why string) error) {
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case err = <-f.failed:
		}
		if l := leader(); l != "" {
			_ = send(ctx, l, faultText(err)) // the next failure tries again
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(faultReportEvery):
		}
	}
}

// memberFaults is the leader's record of the storage faults members
// reported, each with when it came.
type memberFaults struct {
	mu   sync.Mutex
	last map[string]reportedFault
}

type reportedFault struct {
	why string
	at  time.Time
}

func newMemberFaults() *memberFaults {
	return &memberFaults{last: map[string]reportedFault{}}
}

// note keeps a member's report, its text cut to maxFaultText bytes.
func (m *memberFaults) note(member, why string) {
	if len(why) > maxFaultText {
		why = strings.ToValidUTF8(why[:maxFaultText], "")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last[member] = reportedFault{why: why, at: time.Now()}
}

// fresh is the member's last reported fault if it came within faultFresh.
func (m *memberFaults) fresh(member string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.last[member]
	if !ok || time.Since(r.at) > faultFresh {
		return "", false
	}
	return r.why, true
}

// opStorageFault is the control request that reports a storage fault.
const opStorageFault = "storage-fault"

// maxFaultText bounds a reported fault's text as the leader keeps it.
const maxFaultText = 200

// reportStorageFault tells the leader this node's Raft log cannot be
// written (faultStore.reportFaults calls it).
func (n *Node) reportStorageFault(ctx context.Context, leader, why string) error {
	n.log.Warn("telling the leader this node's Raft log cannot be written", "leader", leader, "cause", why)
	_, err := n.forward(ctx, leader, &controlRequest{Op: opStorageFault, Fault: why})
	return err
}

// noteStorageFault keeps a member's report for the reachability watch.
func (n *Node) noteStorageFault(member, why string) {
	if n.consensus == nil {
		return
	}
	n.log.Warn("a member reports that its Raft log cannot be written", "member", member, "cause", why)
	n.consensus.faults.note(member, why)
}

// storageFault is member's fresh storage fault, if it reported one.
func (n *Node) storageFault(member string) (string, bool) {
	if n.consensus == nil {
		return "", false
	}
	return n.consensus.faults.fresh(member)
}
