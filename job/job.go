// Package job is the boundary between the node runtime and the job kinds
// (sum, quantile, sjc, bicluster, anonymize). A job kind is written against
// the small interfaces here and never imports the node package, so it can be
// tested in memory (package jobtest) and run over libp2p unchanged.
//
// # Execution and replay
//
// The coordinator (the Raft leader) runs Kind.Coordinate, which drives the
// job one step at a time: Coordinator.Start commits the step to the log,
// every party of the step runs it in its Session and sends its output to the
// coordinator alone; the coordinator folds the outputs into the step's
// public decision and commits it with Attempt.Commit (Round.Run does the three in
// one call). Coordinate is a fold over committed records, like raft's
// FSM.Apply: it may depend only on the spec, the job's seed and the
// decisions its steps committed; no clock, map order or fresh randomness may
// decide anything in it. After a leader change the new leader calls
// Coordinate from the top: Start answers finished steps from the log (the
// Attempt comes back already committed, nothing runs) and restarts the first
// unfinished one with a higher attempt number. A replayed step whose phase,
// round, parties, args or timeout differ from the committed one fails the
// job (runner.ErrReplay), never silently diverges. Package job/runner is
// the one runtime that keeps this contract, on nodes and in jobtest.
//
// # What goes where
//
// The Raft log reaches every member, so it holds only what every member may
// see: the spec, the job's seed, each step as started (its public Args) and
// each step's Record (the coordinator's public Decision, which parties
// failed and why; no byte counts, which tell of a party's data). A party's output for a step goes to the
// coordinator of that attempt alone and is never committed; a replay that
// needs it again re-runs the step. A decision for one party only is a
// message: the coordinator is a Party too and can Send to a chosen party
// within an attempt (audited like any other send); the attempt's parties
// receive it with the attempt's step key. Such a message is not logged, so
// the receiving session must be able to rebuild what it learnt from its own
// tables and the log after a restart, or the kind must re-run the step that
// sent it.
//
// # Sessions
//
// Kind.Open opens a party's Session for a job when the party first takes part
// in one of its steps, and again after the party's node restarts mid-job. The
// session keeps the party's local state (loaded tables, masks, indexes, its
// own split predicates) across steps; the runtime calls Session.Step for each
// step attempt in log order, one at a time, and Close when the job finishes,
// fails or is cancelled. A session opened mid-job rebuilds its state from its
// own tables, the job's seed and Participant.History (the committed records
// of finished steps): never from messages that were not logged.
package job

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Party is a job's view of the network: send a typed message to a named
// party, receive the next message with a given key from a named party. The
// node's messenger and jobtest's network both pass package
// job/runner/runnertest's TestParty, which checks this contract.
type Party interface {
	// Self is this party's name.
	Self() string
	// Send delivers m to party to (Self included), recording in the audit
	// ledger what it discloses. It returns once the peer has accepted the
	// message, so the peer's Receive finds it from then on. m.From must be
	// Self. Send never writes to m, so one message may go to several
	// parties at once, and the receiver gets a copy. A message the wire
	// refuses (wire.Encode), a forged From, a peer that is no member
	// or a ctx ended before the call fails the send and delivers nothing.
	Send(ctx context.Context, to string, m *wire.Message, disclosure wire.Disclosure) error
	// Receive returns the oldest message with key k sent by party from
	// (one sender's messages of one key come in the order sent), waiting
	// until one arrives or ctx ends; a message already there is returned
	// even when ctx has ended.
	Receive(ctx context.Context, from string, k wire.Key) (*wire.Message, error)
}

// Step is one unit of a job that every taking-part party executes. All of
// its fields but Channel are committed to the log, so all parties see the
// same step.
type Step struct {
	Job         string   `msgpack:"job"`
	Phase       string   `msgpack:"phase"`
	Round       int      `msgpack:"round"`
	Attempt     int      `msgpack:"attempt"`
	Parties     []string `msgpack:"parties"`     // parties taking part, sorted
	Coordinator string   `msgpack:"coordinator"` // the party (node) driving this attempt
	Args        []byte   `msgpack:"args"`        // coordinator's public input to the step, msgpack
	TimeoutMS   int64    `msgpack:"timeout_ms"`  // how long parties may take before being dropped
	// Channel names a sub-protocol within the step (Sub); it is not part
	// of the committed step.
	Channel string `msgpack:"-"`
}

// Timeout is the step's deadline as a duration.
func (s Step) Timeout() time.Duration { return time.Duration(s.TimeoutMS) * time.Millisecond }

// CheckAlone is how a party of a one-party publication (anonymize,
// querylog, graph) refuses any step but the one its spec determines:
// round 0, on that party alone.
func (s Step) CheckAlone(self string) error {
	if s.Round != 0 || !slices.Equal(s.Parties, []string{self}) {
		return fmt.Errorf("party %s refuses %s round %d on %v: coordinator %s asks for a step the spec does not determine", self, s.Phase, s.Round, s.Parties, s.Coordinator)
	}
	return nil
}

// Sub returns the step as seen by one sub-protocol, so that several
// aggregations or exchanges can run in one step without their messages
// answering each other: every Key and Message of the result carries the
// channel name. Nested calls join the names with "/".
func (s Step) Sub(channel string) Step {
	if s.Channel != "" {
		channel = s.Channel + "/" + channel
	}
	s.Channel = channel
	return s
}

// Key returns the protocol key for a message of type typ in this step.
func (s Step) Key(typ string) wire.Key {
	return wire.Key{Type: typ, Job: s.Job, Phase: s.Phase, Round: s.Round, Attempt: s.Attempt, Channel: s.Channel}
}

// Message builds a message of type typ for this step.
func (s Step) Message(from, typ string, body []byte) *wire.Message {
	return &wire.Message{Version: wire.Version, Type: typ, Job: s.Job, Phase: s.Phase,
		Round: s.Round, Attempt: s.Attempt, Channel: s.Channel, From: from, Body: body}
}

// Outputs are what the parties of one attempt returned. They reach the
// coordinator of that attempt only and are never committed: Results are
// private, and Record is what the log keeps of them.
type Outputs struct {
	// Coordinator drove the attempt.
	Coordinator string
	// Results holds each party's output, private to the coordinator.
	Results map[string][]byte
	// Failed names the parties that failed or timed out, with the reason.
	Failed map[string]string
	// Silent lists the parties that sent no output in time or whose node
	// could not be reached (also in Failed): jobs typically exclude them and
	// retry, while an explicit error from a party usually fails the job. When
	// a party is unreachable the attempt ends at once, and parties still
	// working are in neither Results nor Failed; nor are the parties whose
	// step ended because another party told them it had failed it.
	Silent []string
}

// Record is what the log keeps of a finished step: everything in it is seen
// by every member.
type Record struct {
	Step Step `msgpack:"step"`
	// Coordinator drove the attempt that produced the record; after a
	// failover it is the previous leader for steps finished before.
	Coordinator string `msgpack:"coordinator"`
	// Decision is the coordinator's public decision for the step (msgpack
	// of a kind's own type; see Round).
	Decision []byte            `msgpack:"decision"`
	Failed   map[string]string `msgpack:"failed"`
	Silent   []string          `msgpack:"silent"`
	// Error is set when the step failed: the coordinator's reason, which
	// a replay returns again (see Round.Run).
	Error string `msgpack:"error,omitempty"`
}

// Record returns the public part of the outputs with the given decision.
func (o *Outputs) Record(step Step, decision []byte) *Record {
	return &Record{Step: step, Coordinator: o.Coordinator, Decision: decision, Failed: o.Failed, Silent: o.Silent}
}

// Participant is what a party's session gets: the network, the spec, the
// job's public history and the party's own private inputs.
type Participant interface {
	Party
	// JobID is the job's id.
	JobID() string
	// Spec is the job's spec.
	Spec() *Spec
	// Seed is the job's seed, fixed in the log at submission by the leader
	// that accepted it: shared, deterministic randomness every member knows
	// (see Rand), for choices no party's safety rests on. Never a secret;
	// randomness the parties rely on comes from a JointSeed instead.
	Seed() []byte
	// TableSource resolves one of this party's own tables to the source
	// its rows are read from (see ResolveSource): the node's own mapping in
	// node.yaml, else the spec's path inside the node's tables directory.
	// File paths in the result are resolved and never leave that directory.
	TableSource(t TableSpec) (table.Source, error)
	// Secrets gives access to the party's key material in its data dir.
	Secrets() Secrets
	// History returns the committed records of the job's finished steps,
	// in the order they were started.
	History() []*Record
	// Guard is this member's policy's check on what the session
	// discloses: ask it before the party's data enters an aggregate and
	// before noise is drawn (see Guard).
	Guard() Guard
	// Log is this member's own log, for the session's records that stay
	// on the node (never in the Raft log, a message or a report): the
	// queries it pushes down to the member's databases, at debug level
	// (table.ReadOptions.Log).
	Log() *slog.Logger
}

// Secrets reads and keeps named files in a node's data dir that only the
// owning node may read: key material (the consortium's threshold key share)
// and what a job leaves a party to keep (its part of a trained sjc model, a
// generated key share).
type Secrets interface {
	ReadSecret(name string) ([]byte, error)
	// WriteSecret replaces the named file whole (mode 0600), creating its
	// directories; a crash leaves the old contents or the new, never a mix.
	// Names are slash-separated paths inside the data dir. Names under
	// "jobs/JOBID/" are that job's scratch (state a party needs across
	// steps and restarts): a node removes them once the job has ended in
	// the log; keep what must outlast the job elsewhere ("models/JOBID/").
	WriteSecret(name string, data []byte) error
	// Parsed returns parse applied to the named files' contents, cached by
	// the node for as long as the files are unchanged. Validating key
	// material is expensive (a full-size exponentiation for a key share), and
	// a job step should not pay for it every time.
	Parsed(names []string, parse func(contents [][]byte) (any, error)) (any, error)
}

// Coordinator is what Coordinate gets. It is a Party: it can send typed
// messages to chosen parties (with an attempt's Step.Message) and receive
// theirs.
type Coordinator interface {
	Party
	// JobID is the job's id.
	JobID() string
	// Spec is the job's spec.
	Spec() *Spec
	// Seed is the job's seed (see Participant.Seed).
	Seed() []byte
	// Start begins step on step.Parties (all of the job's parties when
	// empty; the step's timeout is the node's default when zero). When the
	// log already holds the step finished, the returned Attempt is already
	// committed (Attempt.Record is set) and nothing runs. A step that
	// differs from the committed one is ErrReplay.
	Start(ctx context.Context, step Step) (Attempt, error)
	// Progress reports how far a long phase has got, for the terminal.
	Progress(phase string, done, total int)
}

// Attempt is one running attempt of a step on the coordinator.
type Attempt interface {
	// Step is the step as committed: job, attempt and coordinator filled in.
	Step() Step
	// Record is the committed record, or nil while the attempt runs.
	Record() *Record
	// Wait waits until every party has reported, failed, timed out or
	// been found unreachable, and returns their outputs. It fails on a
	// committed attempt: its outputs are gone (re-run the step instead).
	Wait(ctx context.Context) (*Outputs, error)
	// Commit ends the attempt: it commits the outputs' public part with
	// decision, or with failure (the step's error, when not empty), and
	// returns the record.
	Commit(ctx context.Context, outs *Outputs, decision []byte, failure string) (*Record, error)
}

// Result is a job's own result fields; the runtime adds kind, parties,
// timing and bytes.
type Result map[string]any

// Kind is one kind of job.
type Kind interface {
	// Validate checks a spec before it is committed, naming the bad field.
	Validate(spec *Spec) error
	// Coordinate drives the job on the coordinator. It must be
	// deterministic given the committed records of its steps (see the
	// package doc).
	Coordinate(ctx context.Context, c Coordinator) (Result, error)
	// Open opens this party's session for the job (see the package doc).
	// ctx ends when the job ends on this node.
	Open(ctx context.Context, p Participant) (Session, error)
	// OutputDisclosure states what a step's output reveals to the
	// coordinator, for the audit ledger.
	OutputDisclosure(step Step) wire.Disclosure
}

// Session is one party's state for one job.
type Session interface {
	// Step runs one step attempt and returns the party's output, which
	// goes to the attempt's coordinator alone. Steps come in log order, one
	// at a time; an attempt may be a re-run of a step the session ran
	// before (a new attempt after a fault or a leader change).
	Step(ctx context.Context, step Step) ([]byte, error)
	// Close releases the session's state.
	Close()
}

// Registry maps spec kinds to their implementation. The binary builds one
// and hands it to the node; there is no global registry.
type Registry map[string]Kind

// Names lists the registered kinds, sorted, for error messages.
func (r Registry) Names() []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Assembler is implemented by kinds whose `cohort sim` run, which owns every
// party, may put together what only the parties together hold: sjc's whole
// tree from each party's kept predicates, keygen's key files, integrate's
// published table. Sim calls Assemble once the job is done, with the
// committed result, every party's Secrets and the output directory; it
// returns the result.json to write (result itself when nothing is added) and
// may write further files under dir. Over real nodes nothing is assembled:
// each node keeps its own part.
type Assembler interface {
	Assemble(ctx context.Context, spec *Spec, result []byte, parties map[string]Secrets, dir string) ([]byte, error)
}

// AssemblePredictions is an Assembler for prediction kinds: it copies the
// per-row predictions the result names ("predictions", a secret of the
// party "predictions_party") to DIR/predictions.csv, and returns result.
func AssemblePredictions(kind string, result []byte, parties map[string]Secrets, dir string) ([]byte, error) {
	var res struct {
		Predictions string `json:"predictions"`
		Party       string `json:"predictions_party"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("%s: result: %w", kind, err)
	}
	sec, ok := parties[res.Party]
	if !ok {
		return nil, fmt.Errorf("%s: no data dir of party %s", kind, res.Party)
	}
	b, err := sec.ReadSecret(res.Predictions)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "predictions.csv"), b, 0o644); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	return result, nil
}

// KeyUser is implemented by kinds whose sessions decrypt with the
// consortium's threshold key (package secureagg). `cohort sim` deals its
// nodes a key only for these kinds: dealing a 2048-bit key costs seconds.
type KeyUser interface {
	UsesThresholdKey() bool
}
