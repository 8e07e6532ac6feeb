// Package job is the boundary between the node runtime and the job kinds
// (sum, sjc, bicluster, anonymize). A job kind is written against the small
// interfaces here and never imports the node package, so it can be tested in
// memory and run over libp2p unchanged.
//
// The execution model is coordinator-driven and replayable. The coordinator
// (the Raft leader) runs Kind.Coordinate, which advances the job by calling
// Coordinator.Run for one step at a time. Run commits the step to the Raft
// log; every party sees the commit and runs Kind.Participate for it; each
// party's output goes back to the coordinator, which commits the outputs.
// A step whose outputs are committed is never run again: after a leader dies,
// the new leader calls Coordinate from the top and Run answers finished steps
// from the log, then restarts the unfinished step with a higher Attempt. So
// Coordinate must be deterministic given the outputs of its steps.
package job

import (
	"context"
	"time"

	"github.com/cohortdm/cohort/protocol"
)

// Party is a job's view of the network: send a typed message to a named
// party, receive the next message with a given key from a named party.
type Party interface {
	// Self is this party's name.
	Self() string
	// Send delivers m to party to, recording in the audit ledger what it
	// discloses. It returns once the peer has accepted the message.
	Send(ctx context.Context, to string, m *protocol.Message, disclosure protocol.Disclosure) error
	// Receive returns the next message with key k sent by party from,
	// waiting until one arrives or ctx ends.
	Receive(ctx context.Context, from string, k protocol.Key) (*protocol.Message, error)
}

// Step is one unit of a job that every taking-part party executes. All of
// its fields are committed to the log, so all parties see the same step.
type Step struct {
	Job         string   `msgpack:"job"`
	Phase       string   `msgpack:"phase"`
	Round       int      `msgpack:"round"`
	Attempt     int      `msgpack:"attempt"`
	Parties     []string `msgpack:"parties"`     // parties taking part, sorted
	Coordinator string   `msgpack:"coordinator"` // the party (node) driving this attempt
	Args        []byte   `msgpack:"args"`        // coordinator's input to the step, msgpack
	TimeoutMS   int64    `msgpack:"timeout_ms"`  // how long parties may take before being dropped
}

// Timeout is the step's deadline as a duration.
func (s Step) Timeout() time.Duration { return time.Duration(s.TimeoutMS) * time.Millisecond }

// Key returns the protocol key for a message of type typ in this step.
func (s Step) Key(typ string) protocol.Key {
	return protocol.Key{Type: typ, Job: s.Job, Phase: s.Phase, Round: s.Round, Attempt: s.Attempt}
}

// Message builds a message of type typ for this step.
func (s Step) Message(from, typ string, body []byte) *protocol.Message {
	return &protocol.Message{Version: protocol.Version, Type: typ, Job: s.Job, Phase: s.Phase,
		Round: s.Round, Attempt: s.Attempt, From: from, Body: body}
}

// Outputs are the results of one step: what each party returned, and the
// parties that failed or timed out with the reason.
type Outputs struct {
	// Coordinator drove the attempt that produced these outputs; after a
	// failover it is the previous leader for steps finished before.
	Coordinator string            `msgpack:"coordinator"`
	Results     map[string][]byte `msgpack:"results"`
	Failed      map[string]string `msgpack:"failed"`
	// Bytes is what each party had sent for the job when it finished the step.
	Bytes map[string]int64 `msgpack:"bytes"`
	// Silent lists the parties that sent no output in time or whose node
	// could not be reached (also in Failed): jobs typically exclude them and
	// retry, while an explicit error from a party usually fails the job. When
	// a party is unreachable the attempt ends at once, and parties still
	// working are in neither Results nor Failed.
	Silent []string `msgpack:"silent"`
}

// Participant is what Participate gets: the network, the spec and the
// party's own private inputs.
type Participant interface {
	Party
	// JobID is the job's id.
	JobID() string
	// Spec is the job's spec.
	Spec() *Spec
	// TablePath resolves the path of one of this party's own tables.
	TablePath(t TableSpec) string
	// Secrets gives access to the party's key material in its data dir.
	Secrets() Secrets
}

// Secrets reads named key material from a node's data dir (for example the
// consortium's threshold key share). Only the owning node can read it.
type Secrets interface {
	ReadSecret(name string) ([]byte, error)
	// Parsed returns parse applied to the named files' contents, cached by
	// the node for as long as the files are unchanged. Validating key
	// material is expensive (a full-size exponentiation for a key share), and
	// a job step should not pay for it every time.
	Parsed(names []string, parse func(contents [][]byte) (any, error)) (any, error)
}

// Coordinator is what Coordinate gets.
type Coordinator interface {
	// Self is the coordinator's party name.
	Self() string
	// JobID is the job's id.
	JobID() string
	// Spec is the job's spec.
	Spec() *Spec
	// Run executes step on step.Parties (all of the job's parties when
	// empty) and returns their outputs. A step already finished in the log
	// returns its committed outputs without running again.
	Run(ctx context.Context, step Step) (*Outputs, error)
	// Progress reports how far a long phase has got, for the terminal.
	Progress(phase string, done, total int)
}

// Result is a job's own result fields; the runtime adds kind, parties,
// timing and bytes.
type Result map[string]any

// Kind is one kind of job.
type Kind interface {
	// Validate checks a spec before it is committed, naming the bad field.
	Validate(spec *Spec) error
	// Coordinate drives the job on the coordinator. It must be
	// deterministic given the outputs of its steps (see the package doc).
	Coordinate(ctx context.Context, c Coordinator) (Result, error)
	// Participate runs one step on one party and returns its output for the
	// coordinator.
	Participate(ctx context.Context, p Participant, step Step) ([]byte, error)
	// OutputDisclosure states what a step's output reveals to the
	// coordinator, for the audit ledger.
	OutputDisclosure(step Step) protocol.Disclosure
}

// Registry maps spec kinds to their implementation. The binary builds one
// and hands it to the node; there is no global registry.
type Registry map[string]Kind
