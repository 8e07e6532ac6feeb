package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are per node (their own registry), so several in-process nodes in
// one simulation never share counters.
type metrics struct {
	reg       *prometheus.Registry
	msgsSent  *prometheus.CounterVec
	bytesSent *prometheus.CounterVec
	msgsRecv  *prometheus.CounterVec
	rejects   *prometheus.CounterVec
	denied    prometheus.Counter
	raftState *prometheus.GaugeVec
	raftTerm  prometheus.Gauge
	// jobPeakRSS is the process's highest resident memory seen while a
	// job of each kind ran on this node (memory.go).
	jobPeakRSS *prometheus.GaugeVec
	phaseSecs  *prometheus.HistogramVec
	jobs       *prometheus.CounterVec
	dials      *prometheus.CounterVec
	// raftRefused counts Raft RPCs the stream layer refused (raftnet.go).
	raftRefused *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		msgsSent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_messages_sent_total",
			Help: "Job messages sent, per peer and message type."}, []string{"peer", "type"}),
		bytesSent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_bytes_sent_total",
			Help: "Bytes of job messages sent, per peer."}, []string{"peer"}),
		msgsRecv: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_messages_received_total",
			Help: "Job messages accepted, per peer and type."}, []string{"peer", "type"}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_messages_rejected_total",
			Help: "Malformed, oversized or out-of-order messages refused, per peer."}, []string{"peer"}),
		denied: prometheus.NewCounter(prometheus.CounterOpts{Name: "cohort_connections_denied_total",
			Help: "Connections refused because the peer is not a consortium member."}),
		raftState: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cohort_raft_state",
			Help: "1 for this node's current Raft state."}, []string{"state"}),
		raftTerm: prometheus.NewGauge(prometheus.GaugeOpts{Name: "cohort_raft_term",
			Help: "This node's current Raft term: it grows by at least one at every election."}),
		jobPeakRSS: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cohort_job_peak_resident_memory_bytes",
			Help: "The process's highest resident memory sampled while a job of this kind ran on this node."}, []string{"kind"}),
		phaseSecs: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cohort_job_phase_seconds",
			Help: "Duration of job steps, per job kind and phase.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 16)},
			[]string{"kind", "phase"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_jobs_total",
			Help: "Jobs finished on this node as coordinator, per kind and status."}, []string{"kind", "status"}),
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cohort_member_dials_total",
			Help: "Dials to members this node was not connected to (redial with backoff), per member and result."}, []string{"peer", "result"}),
	}
	m.raftRefused = newRaftRefusals(m.reg)
	m.reg.MustRegister(m.msgsSent, m.bytesSent, m.msgsRecv, m.rejects, m.denied, m.raftState, m.raftTerm, m.jobPeakRSS, m.phaseSecs, m.jobs, m.dials)
	// The Go runtime (go_*) and process (process_*) metrics that operators'
	// dashboards expect of any Go service. In a simulation every node reports
	// the same process, which is what it is.
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) sent(peer, typ string, n int) {
	m.msgsSent.WithLabelValues(peer, typ).Inc()
	m.bytesSent.WithLabelValues(peer).Add(float64(n))
}

func (m *metrics) received(peer, typ string) { m.msgsRecv.WithLabelValues(peer, typ).Inc() }
func (m *metrics) rejected(peer string)      { m.rejects.WithLabelValues(peer).Inc() }

func (m *metrics) setRaftState(state string) {
	for _, s := range []string{"Follower", "Candidate", "Leader", "Shutdown"} {
		v := 0.0
		if s == state {
			v = 1
		}
		m.raftState.WithLabelValues(s).Set(v)
	}
}
