// Package console is a Cohort node's web console: pages served by the
// node itself at /console/ on its HTTP listener, for the people who run
// it. It shows the jobs (the queue and running jobs as they happen, the
// finished ones with their results and failures, a job's spec, timeline
// and bytes per peer), the disclosures (the audit ledger per job, peer and
// disclosure kind, with totals, charts and CSV or JSON-lines exports), the
// jobs awaiting this node's approval with what they would disclose, the
// policy in force and the privacy budget spent and left, the consortium
// (members, health, Raft role, voters, leader, changes seen) and the node
// itself (version, uptime, data dir use, threshold key, recent warnings).
//
// Start reading at Node, the small interface the console needs of a node
// (package node implements it and mounts New's handler), then console.go
// (routes and the security headers), session.go (sign-in, cookies, CSRF)
// and one view file per page: jobs.go, disclosures.go (with ledger.go,
// the index of the audit ledger, and export.go, its exports kept
// rendered), approvals.go, nodeinfo.go. Pages are server-rendered html/template; charts are SVG
// laid out in chart.go and timeline.go; static/console.js only swaps a
// page's live parts when the node's event stream (events.go) says the jobs
// changed. Every file is embedded: the console needs no other server, no
// CDN and no internet.
//
// # Who learns what
//
// The console discloses nothing to other members: it reads what the node
// already holds (its replicated log, its own ledger, policy and data dir)
// and shows it to whoever signs in with the node's API token, the same
// token the JSON API takes, who could read all of it there or on disk.
// Its two actions, approve and reject, are the API's. The token travels
// in a form once per sign-in and the session id in a cookie on every
// request; like the API's bearer token, both cross the HTTP listener in
// the clear, so bind it to loopback or a management network, or put TLS in
// front of it (the cookie is then marked Secure).
//
// What it does not check: the operator is trusted with everything shown.
// The session store is in memory (a restart signs everyone out) and
// bounded (the 65th sign-in ends the session closest to expiry).
package console
