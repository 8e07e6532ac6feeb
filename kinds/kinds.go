// Package kinds is the one registry of job kinds: the name a spec's kind:
// field gives, and the package that implements it. A node runs these and
// no others; a new kind is added here and to the default policy's kinds.
//
//	kind         package              what it computes
//	sum          sum                  a secure sum of a column (optionally noised)
//	quantile     quantile             quantiles of a pooled column by bisection
//	bicluster    bicluster            Phoenix: biclusters over rows split by party
//	sjc          sjc                  a decision tree over tables joined across parties
//	boost        boost                gradient-boosted trees over tables joined across parties
//	sjc-predict  sjc                  that tree's predictions, each party's split kept home
//	boost-predict boost               a boosted model's scores of new tables, each party's split kept home
//	integrate    integrate            a k-anonymous integration of columns split by party
//	anonymize    anonymize/onetable   one party's table anonymised under a spec's model
//	keygen       keygen               the consortium's threshold keys, dealt without a dealer
//	pgen         pgen                 anonymity-pruned trees and pooled pseudo-data
//	kde          kde                  per-class synthetic samples of a density estimate, pooled
//	coherence    coherence/publish    transactions published with coherence
//	querylog     querylog/publish     one party's query log published with no two queries sharing a site
//	graph        graphanon/publish    one party's graph published with its nodes k-anonymised and its sensitive edges removed
//	probe        probe                a secure aggregation of public vectors (health check)
//	hamming      hamming              how many ids two parties' columns differ at (ElGamal, Yang et al.)
//	model-select modelselect          candidate models' error counts against another party's labels
package kinds

import (
	"github.com/cohortdm/cohort/anonymize/onetable"
	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/coherence/publish"
	graph "github.com/cohortdm/cohort/graphanon/publish"
	"github.com/cohortdm/cohort/hamming"
	"github.com/cohortdm/cohort/integrate"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/kde"
	"github.com/cohortdm/cohort/keygen"
	"github.com/cohortdm/cohort/modelselect"
	"github.com/cohortdm/cohort/pgen"
	"github.com/cohortdm/cohort/probe"
	"github.com/cohortdm/cohort/quantile"
	querylog "github.com/cohortdm/cohort/querylog/publish"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/sum"
)

// All returns every kind a node runs, by its spec name (a new map each
// call: callers may narrow it).
func All() job.Registry {
	return job.Registry{
		"sum":         sum.Kind{},
		"quantile":    quantile.Kind{},
		"bicluster":   bicluster.Kind{},
		"sjc":         sjc.Kind{},
		"sjc-predict": sjc.PredictKind{},
		"boost":       boost.Kind{},
		"integrate":   integrate.Kind{},
		"anonymize":   onetable.Kind{},
		"keygen":      keygen.Kind{},
		"pgen":        pgen.Kind{},
		"kde":         kde.Kind{},
		"coherence":   publish.Kind{},
		"querylog":    querylog.Kind{},
		"graph":       graph.Kind{},
		"probe":       probe.Kind{},
		"hamming":     hamming.Kind{},

		// A blank line above keeps gofmt from realigning every entry.
		"model-select": modelselect.Kind{},

		"boost-predict": boost.PredictKind{},
	}
}
