// Package runner is Cohort's job runtime, written once: the log schema
// (Entry) and the state every member applies it to (State), the
// coordinator that drives a job on the leader (Coordinator) and the worker
// that runs a job's steps on a party (Worker). It runs over two small
// interfaces, as hashicorp/raft runs over its Transport and LogStore: a
// replicated Log and a network (job.Party). The node plugs in its Raft log
// and libp2p messenger; package jobtest plugs in an in-memory log and
// network with fault injection, so a kind is tested in one process on the
// very code that runs it on real nodes. Package runnertest is the
// conformance suite both pairs pass, as raft runs one suite over every
// Transport.
//
// Start reading at Coordinator.Run and Worker.Run; package job states the
// contract a kind is written against (execution and replay, what goes
// where, sessions).
//
// What goes where: the log holds the spec and seed, each attempt as
// started, each step's Record (the coordinator's public decision and which
// parties failed and why) and the job's result or failure; nothing private
// to one member, and no byte counts (what a party sent in one step tells of
// its data, a PSI's set size for one). A party's output goes to the
// attempt's coordinator alone, as a job/output message; a party whose
// step fails also tells the attempt's other parties, with an empty
// job/failed notice, so that none waits for its messages (peerfail.go).
package runner
