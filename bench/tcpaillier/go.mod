module github.com/cohortdm/cohort/bench/tcpaillier

go 1.26.8

require (
	github.com/cohortdm/cohort v0.0.0
	github.com/niclabs/tcpaillier v0.0.7
)

require (
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)

replace github.com/cohortdm/cohort => ../..
