#!/usr/bin/env bash
# fuzz.sh runs every fuzz target (func Fuzz… in a test file under pkg/,
# infra/ or functions/), one after the other, for FUZZTIME (default 5s)
# each; make fuzz runs it inside a throwaway stack.
#
# Each package's test binary is built once, with the fuzzer's coverage
# instrumentation (go test -c -fuzz), and run once per target from the
# package's folder, as go test -fuzz runs it, with go test's own corpus
# cache (GOCACHE/fuzz/<import path>): go test -fuzz would check the build
# and link the binary again for each target, seconds each.
#
# A target's output (the logs of its set-up, the fuzzer's progress) is shown
# only when it fails; a failing input is saved under the package's
# testdata/fuzz/<FuzzName>/, where plain go test replays it from then on.
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" as FUZZTIME ends, having found nothing
# (go.dev/issue/75804, fixed in Go 1.27): such a run, which wrote no
# failing input, is run again, twice at most.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

go=${GO:-go}
fuzztime=${FUZZTIME:-5s}
corpus=$("$go" env GOCACHE)/fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log

# target lines: <package folder> <FuzzName>
grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' pkg infra functions |
	sed -E 's|^(.*)/[^/]*:func (Fuzz.*)$|\1 \2|' | sort -u >"$work/targets"

while read -r dir; do
	bin=$work/$(echo "$dir" | tr / _).test
	if ! "$go" test -c -fuzz . -o "$bin" "./$dir" >"$log" 2>&1; then
		cat "$log"
		echo "FAIL building ./$dir for fuzzing" >&2
		exit 1
	fi
done < <(cut -d' ' -f1 "$work/targets" | uniq)

last=
while read -r dir name; do
	bin=$work/$(echo "$dir" | tr / _).test
	if [ "$dir" != "$last" ]; then
		cache=$corpus/$("$go" list "./$dir")
		last=$dir
	fi
	for try in 1 2 3; do
		if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^$name\$" -test.fuzztime "$fuzztime" \
			-test.fuzzcachedir "$cache" -test.timeout 10m -test.paniconexit0) >"$log" 2>&1; then
			break
		fi
		if [ "$try" = 3 ] || ! grep -q '^    context deadline exceeded$' "$log" || grep -q 'Failing input written to' "$log"; then
			cat "$log"
			echo "FAIL $name (./$dir)" >&2
			exit 1
		fi
		echo "again $name (./$dir): the fuzzing coordinator deadline race (go.dev/issue/75804)"
	done
	echo "ok   $name (./$dir) $(grep -o 'execs: [0-9]*' "$log" | tail -n 1)"
done <"$work/targets"
