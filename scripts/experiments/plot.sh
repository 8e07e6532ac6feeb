#!/usr/bin/env bash
# plot.sh CSV XCOL YCOL SERIESCOL TITLE OUT.svg: a line plot of the median of
# YCOL over the runs at each XCOL value, one line per SERIESCOL value ("" for
# one line), as a self-contained SVG (no plotting library needed). Used by
# the per-kind experiment scripts; the docs show the SVGs.
set -euo pipefail
csv=$1 x=$2 y=$3 series=$4 title=$5 out=$6
mkdir -p "$(dirname "$out")"
awk -F, -v X="$x" -v Y="$y" -v S="$series" -v T="$title" '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; if (!(X in col) || !(Y in col)) { print "plot.sh: no column " X " or " Y > "/dev/stderr"; exit 1 }; next }
{
	s = (S != "" && (S in col)) ? S "=" $(col[S]) : Y
	xv = $(col[X]) + 0; yv = $(col[Y]) + 0
	if ($(col[Y]) == "") next
	k = s SUBSEP xv
	n[k]++; v[k, n[k]] = yv
	if (!(s in seen)) { seen[s] = 1; ser[++ns] = s }
	if (!((s, xv) in hasx)) { hasx[s, xv] = 1; nx[s]++; xs[s, nx[s]] = xv }
	if (!(xv in allx)) { allx[xv] = 1; nall++ }
}
function median(k,   i, j, t, m, a) {
	m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
	for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function px(xv) { return 70 + (xv - xmin) / (xmax - xmin) * 500 }
function py(yv) { return 330 - yv / ymax * 280 }
END {
	if (ns == 0) { print "plot.sh: no rows" > "/dev/stderr"; exit 1 }
	xmin = 1e300; xmax = -1e300; ymax = 0
	for (i = 1; i <= ns; i++) for (j = 1; j <= nx[ser[i]]; j++) {
		xv = xs[ser[i], j]; m = median(ser[i] SUBSEP xv); med[ser[i], xv] = m
		if (xv < xmin) xmin = xv; if (xv > xmax) xmax = xv; if (m > ymax) ymax = m
	}
	if (xmax == xmin) { xmin -= 1; xmax += 1 }
	if (ymax == 0) ymax = 1
	ymax *= 1.1
	split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b", color, " ")
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"400\" font-family=\"sans-serif\" font-size=\"12\">\n"
	printf "<rect width=\"800\" height=\"400\" fill=\"white\"/>\n<text x=\"320\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n", T
	printf "<line x1=\"70\" y1=\"330\" x2=\"570\" y2=\"330\" stroke=\"black\"/><line x1=\"70\" y1=\"50\" x2=\"70\" y2=\"330\" stroke=\"black\"/>\n"
	for (t = 0; t <= 4; t++) {
		yv = ymax * t / 4
		printf "<text x=\"64\" y=\"%.1f\" text-anchor=\"end\">%.3g</text><line x1=\"70\" y1=\"%.1f\" x2=\"570\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", py(yv) + 4, yv, py(yv), py(yv)
		if (nall > 10) printf "<text x=\"%.1f\" y=\"348\" text-anchor=\"middle\">%.4g</text>\n", px(xmin + (xmax - xmin) * t / 4), xmin + (xmax - xmin) * t / 4
	}
	if (nall <= 10) for (xv in allx) printf "<text x=\"%.1f\" y=\"348\" text-anchor=\"middle\">%.4g</text>\n", px(xv + 0), xv + 0
	printf "<text x=\"320\" y=\"372\" text-anchor=\"middle\">%s</text>\n", X
	printf "<text x=\"18\" y=\"190\" text-anchor=\"middle\" transform=\"rotate(-90 18 190)\">%s (median of runs)</text>\n", Y
	for (i = 1; i <= ns; i++) {
		s = ser[i]; c = color[(i - 1) % 6 + 1]; pts = ""
		# x values in increasing order
		for (j = 1; j <= nx[s]; j++) o[j] = xs[s, j]
		for (j = 2; j <= nx[s]; j++) { t = o[j]; for (k = j - 1; k >= 1 && o[k] > t; k--) o[k + 1] = o[k]; o[k + 1] = t }
		for (j = 1; j <= nx[s]; j++) {
			pts = pts sprintf("%.1f,%.1f ", px(o[j]), py(med[s, o[j]]))
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(o[j]), py(med[s, o[j]]), c
		}
		printf "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", pts, c
		printf "<rect x=\"585\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"598\" y=\"%d\" font-size=\"10\">%s</text>\n", 50 + 16 * i, c, 59 + 16 * i, s
	}
	print "</svg>"
}' "$csv" >"$out"
echo "wrote $out" >&2
