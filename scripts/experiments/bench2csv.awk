#!/usr/bin/awk -f
# bench2csv.awk: Go benchmark output (stdin) to CSV (stdout). Each
# "BenchmarkName/k1=v1/k2=v2-CPUS  N  value unit  value unit ..." line becomes
# one row: benchmark, run (1, 2, ... per distinct name), then k1, k2, ...
# and one column per unit (ns/op, s/job, B/party, ...), plus the columns
# given with -v extra="col=value;col=value" (date, commit, load) on every row.
# Units whose names hold characters a CSV header should not are kept as is.
function esc(s) { if (s !~ /[",]/) return s; gsub(/"/, "\"\"", s); return "\"" s "\"" }
BEGIN { nrow = 0; ncol = 0 }
/^Benchmark/ {
	name = $1
	sub(/-[0-9]+$/, "", name)
	n = split(name, parts, "/")
	nrow++
	row[nrow, "benchmark"] = parts[1]
	runs[name]++
	row[nrow, "run"] = runs[name]
	addcol("benchmark"); addcol("run")
	for (i = 2; i <= n; i++) {
		if (split(parts[i], kv, "=") == 2) { addcol(kv[1]); row[nrow, kv[1]] = kv[2] }
		else { addcol("case"); row[nrow, "case"] = parts[i] }
	}
	addcol("iterations"); row[nrow, "iterations"] = $2
	for (i = 3; i < NF; i += 2) { addcol($(i + 1)); row[nrow, $(i + 1)] = $i }
}
function addcol(c) { if (!(c in seen)) { seen[c] = 1; cols[++ncol] = c } }
END {
	m = split(extra, ex, ";")
	for (i = 1; i <= m; i++) if (split(ex[i], kv, "=") == 2) { addcol(kv[1]); exv[kv[1]] = kv[2] }
	line = ""
	for (c = 1; c <= ncol; c++) line = line (c > 1 ? "," : "") esc(cols[c])
	print line
	for (r = 1; r <= nrow; r++) {
		line = ""
		for (c = 1; c <= ncol; c++) {
			v = ((r, cols[c]) in row) ? row[r, cols[c]] : ((cols[c] in exv) ? exv[cols[c]] : "")
			line = line (c > 1 ? "," : "") esc(v)
		}
		print line
	}
}
