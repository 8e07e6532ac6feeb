#!/usr/bin/env bash
# console-check.sh: drive a running node's web console over HTTP as an
# operator's browser would, with curl: refused without a session, refused
# with a wrong token, sign in with the node's API token, read every view,
# find a finished job on the jobs page and its own page, export the ledger,
# sign out. Exits non-zero, saying which check failed, on any difference.
#
#   scripts/console-check.sh HOST:PORT TOKEN_FILE JOB_ID
#
# compose.sh runs it against a node in a container, cluster.sh (CONSOLE=1)
# against a node in its own network namespace. Prints one line per page:
# status, bytes and time.
set -euo pipefail
[[ $# == 3 ]] || { echo "usage: $0 HOST:PORT TOKEN_FILE JOB_ID" >&2; exit 2; }
API=$1 TOKEN_FILE=$2 JOB=$3
command -v curl >/dev/null || { echo "console-check: curl not found (apt-get install curl)" >&2; exit 1; }
BASE=http://$API/console
JAR=$(mktemp)
trap 'rm -f "$JAR"' EXIT
fail() { echo "console-check: $*" >&2; exit 1; }

# get PATH: prints the body; CODE, BYTES and SECS of the last request are set.
get() {
	local out
	out=$(curl -sS -b "$JAR" -c "$JAR" -o /dev/stdout -w '\n%{http_code} %{size_download} %{time_total}' "$BASE$1")
	read -r CODE BYTES SECS <<<"${out##*$'\n'}"
	BODY=${out%$'\n'*}
	printf '  %-40s %s %7s B %6.1f ms\n' "GET $1" "$CODE" "$BYTES" "$(awk -v s="$SECS" 'BEGIN { print s * 1000 }')" >&2
}

# 1. No session: every view sends the browser to the sign-in page.
code=$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/jobs")
[[ $code == 303 ]] || fail "GET /jobs without a session: status $code, want 303 (to the sign-in page)"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$BASE/disclosures.csv")
[[ $code == 303 || $code == 401 ]] || fail "GET /disclosures.csv without a session: status $code, want 303 or 401"

# 2. A wrong token is refused, a cross-site sign-in too.
code=$(curl -sS -o /dev/null -w '%{http_code}' --data-urlencode "token=not-the-token" "$BASE/login")
[[ $code == 401 ]] || fail "sign-in with a wrong token: status $code, want 401"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H 'Sec-Fetch-Site: cross-site' -H 'Origin: https://evil.example' \
	--data-urlencode "token@$TOKEN_FILE" "$BASE/login")
[[ $code == 403 ]] || fail "cross-site sign-in: status $code, want 403"

# 3. Sign in: a session cookie, HttpOnly and SameSite=Strict.
headers=$(curl -sS -D - -o /dev/null -c "$JAR" --data-urlencode "token@$TOKEN_FILE" "$BASE/login")
grep -qi '^location: /console/jobs' <<<"$headers" || fail "sign-in did not lead to the jobs page"
grep -i '^set-cookie:' <<<"$headers" | grep -qi 'httponly' || fail "session cookie is not HttpOnly"
grep -i '^set-cookie:' <<<"$headers" | grep -qi 'samesite=strict' || fail "session cookie is not SameSite=Strict"

# 4. Every view, and the job in them.
echo "console of $API (job $JOB):" >&2
get /jobs
[[ $CODE == 200 ]] || fail "GET /jobs: status $CODE"
grep -q "$JOB" <<<"$BODY" || fail "the jobs page does not list job $JOB"
get "/jobs/$JOB"
[[ $CODE == 200 ]] || fail "GET /jobs/$JOB: status $CODE"
grep -q '>done<' <<<"$BODY" || fail "job $JOB's page does not show it done"
grep -q '<svg' <<<"$BODY" || fail "job $JOB's page has no timeline chart"
for page in /disclosures /approvals /consortium /node; do
	get "$page"
	[[ $CODE == 200 ]] || fail "GET $page: status $CODE"
done
get "/disclosures.csv?job=$JOB"
[[ $CODE == 200 ]] || fail "GET /disclosures.csv: status $CODE"
(($(grep -c "$JOB" <<<"$BODY") > 0)) || fail "the ledger export has no row of job $JOB"
csp=$(curl -sS -D - -o /dev/null -b "$JAR" "$BASE/jobs" | grep -i '^content-security-policy:' || true)
grep -q "script-src 'self'" <<<"$csp" || fail "no strict Content-Security-Policy on /jobs"

# 5. A state-changing request without the CSRF token is refused; sign out.
code=$(curl -sS -o /dev/null -w '%{http_code}' -b "$JAR" -X POST "$BASE/logout")
[[ $code == 403 ]] || fail "sign-out without the CSRF token: status $code, want 403"
csrf=$(get /jobs 2>/dev/null; sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' <<<"$BODY" | head -n 1)
[[ -n $csrf ]] || fail "no CSRF token in the jobs page's forms"
code=$(curl -sS -o /dev/null -w '%{http_code}' -b "$JAR" -c "$JAR" --data-urlencode "csrf=$csrf" "$BASE/logout")
[[ $code == 303 ]] || fail "sign-out: status $code, want 303"
code=$(curl -sS -o /dev/null -w '%{http_code}' -b "$JAR" "$BASE/jobs")
[[ $code == 303 ]] || fail "GET /jobs after sign-out: status $code, want 303"
echo "console-check: $API passed (sign-in, every view, job $JOB, export, CSRF, sign-out)" >&2
