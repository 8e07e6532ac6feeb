#!/usr/bin/env bash
# movielens-figures.sh: docs/anonymize.md's survey-rating figures on the real
# MovieLens 100K (GroupLens; not shipped: give the directory that holds its
# u.data and u.user). The ratings become a long table (user,item,rating),
# and each user's age (u.user) becomes the sensitive issue "age", rated 1..5
# by age band: under 25, 25-34, 35-44, 45-54, 55 and over.
#
#   scripts/movielens-figures.sh ML100K_DIR [COHORT_BINARY]
#
# It prints, for each (k, epsilon, l) of the table in docs/anonymize.md, the
# lines of `cohort data rating` with --out (the anonymisation, checked
# again) and, for k = 10, with --pairwise (slicing against the baseline).
set -euo pipefail
dir=${1:?usage: movielens-figures.sh ML100K_DIR [COHORT_BINARY]}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cohort=${2:-}
if [[ -z $cohort ]]; then go build -o "$work/cohort" ./cmd/cohort; cohort=$work/cohort; fi
{
	echo "user,item,rating"
	awk -F'\t' '{print "u" $1 ",m" $2 "," $3}' "$dir/u.data"
	awk -F'|' '{a = $2; b = (a < 25) ? 1 : (a < 35) ? 2 : (a < 45) ? 3 : (a < 55) ? 4 : 5; print "u" $1 ",age," b}' "$dir/u.user"
} >"$work/ml.csv"
echo "== $(wc -l <"$work/ml.csv") lines; $(date -u); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== the table as it is: epsilon search for k = 10 and l = 1"
/usr/bin/time -f "%e s" "$cohort" data rating "$work/ml.csv" --layout long --sensitive age --k 10 --l 1 2>&1
for e in 1 2 3; do
	echo "== k 10, epsilon $e, slicing and pairwise"
	"$cohort" data rating "$work/ml.csv" --layout long --sensitive age --k 10 --epsilon "$e" --pairwise 2>&1
done
for c in "10 1 0" "10 2 0" "10 3 0" "5 2 0" "20 2 0" "40 2 0" "60 2 0" "10 2 0.8" "10 2 1.0" "10 2 1.2"; do
	read -r k e l <<<"$c"
	echo "== anonymised: k $k, epsilon $e, l $l; load $(cut -d' ' -f1-3 /proc/loadavg)"
	rm -f "$work/anon.csv"
	"$cohort" data rating "$work/ml.csv" --layout long --sensitive age --k "$k" --epsilon "$e" --l "$l" --out "$work/anon.csv" 2>&1
done
