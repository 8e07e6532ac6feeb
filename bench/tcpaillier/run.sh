#!/bin/sh
# Runs the side-by-side benchmarks on one core, interleaving the runs of
# both benchmark binaries so that load changes hit both alike, then prints
# benchstat medians. Usage (from bench/tcpaillier): ./run.sh [runs] [primes]
set -e
runs=${1:-6}
primes=${2:-15}
out=${OUT:-/tmp/paillier-bench}
benchstat=${BENCHSTAT:-$(go env GOPATH)/bin/benchstat}
mkdir -p "$out"
go test -c -o "$out/bench.test" .
(cd ../.. && go test -c -o "$out/paillier.test" ./paillier)
: > "$out/tc.txt"
: > "$out/ours.txt"
: > "$out/safeprime.txt"
for i in $(seq "$runs"); do
	"$out/bench.test" -test.run '^$' -test.bench '^Benchmark([^S]|Sh)' -test.cpu 1 >> "$out/tc.txt"
	"$out/paillier.test" -test.run '^$' -test.bench '^Benchmark([^S]|Sh)' -test.cpu 1 >> "$out/ours.txt"
done
# One 1024-bit safe prime per sample, for a median over many samples.
"$out/bench.test" -test.run '^$' -test.bench SafePrime -test.benchtime 1x -test.count "$primes" -test.cpu 1 >> "$out/safeprime.txt"
"$benchstat" -col /impl "$out/tc.txt"
"$benchstat" "$out/ours.txt"
"$benchstat" "$out/safeprime.txt"
