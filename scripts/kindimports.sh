#!/bin/sh
# kindimports lists every import from one job kind's package tree into
# another's (a kind's tree: its directory and everything under it). The
# project keeps none: what two kinds share lives in a package of its own.
# Usage: scripts/kindimports.sh   (from the repository root; exit 1 if any)
set -eu
mod=$(go list -m)
kinds="sum quantile bicluster sjc integrate anonymize keygen pgen coherence probe transform"
found=0
for k in $kinds; do
	for pkg in $(go list ./$k/...); do
		for imp in $(go list -f '{{join .Imports " "}}' "$pkg"); do
			for other in $kinds; do
				[ "$other" = "$k" ] && continue
				case "$imp" in
				"$mod/$other" | "$mod/$other/"*)
					echo "$pkg imports $imp"
					found=1
					;;
				esac
			done
		done
	done
done
exit $found
