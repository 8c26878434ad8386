# Payments service. Every target is described in docs/local.md.
#
#   make run                      the whole service on 127.0.0.1, no Docker, no AWS account
#   make listen [TOKEN=<token> [EVENTS=<kinds>] | COMPANY=<id>]  an HTTPS webhook receiver for `make run`, printing each delivery verified
#   make metrics                  the metrics the functions of `make run` wrote, in a table
#   make test                     vet, staticcheck, and every test against a throwaway local stack
#   make test-unit                the domain's tests (go test -short ./pkg/...) in memory, no emulators
#   make reset                    wipe the local stack's data
#   make build                    every function's bootstrap for Lambda (linux/arm64) in bin/
#   make build-<LogicalId>        one function, as `sam build` (BuildMethod: makefile) calls it
#   make deploy STAGE=dev         sam build && sam deploy --config-env dev
#   make invoke FN=wallets EVENT=events/wallets/list.json [TOKEN=…]
#   make sam-env [HOST=host.docker.internal]  the --env-vars file for sam local against make run's emulators
#   make fuzz [FUZZTIME=5s]       each fuzz target for FUZZTIME (make test runs it)
#   make lint                     gofmt, vet, staticcheck, cfn-lint template.yaml
#   make size                     each bootstrap's size and gzipped size (target: ≤ 3.0 MiB gzipped, 3.5 with Stripe's library, 4.0 the dashboard)
#   make coldstart [RUNS=30]      each function's exec → first /next under AWS's Runtime Interface Emulator beside a hello-world floor (target: ≤ 2.5 ×)
#   make loadtest [CLIENTS=8] [DURATION=30s] [AUTH_CLIENTS=16] [AUTH_DURATION=15s]  payouts, card authorizations: dev server vs the store call alone; a bulk batch
#   make bench | clean

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

GO ?= go
CACHE := $(CURDIR)/.cache
DEVSTACK := $(CACHE)/bin/devstack
LISTEN := $(CACHE)/bin/listen
# make run's data, logs, secrets, local CA and state (docs/local.md).
DATA_DIR ?= $(CACHE)
BUILD_DIR := .aws-sam/build
FUNCTIONS := $(notdir $(patsubst %/,%,$(dir $(wildcard functions/*/main.go))))

# staticcheck 2026.2.2, the release that knows Go 1.26, run from the module
# proxy so every machine runs the same one. STATICCHECK= skips it.
STATICCHECK_VERSION ?= v0.8.2
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# How Lambda's provided.al2023 runtime on arm64 wants a Go function, as
# small as it goes (docs/footprint.md): no RPC runtime, no HTTP/2 (the
# Runtime API and every AWS service we call speak HTTP/1.1), no inlining,
# no symbols.
LAMBDA_ENV := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_FLAGS := -tags lambda.norpc,nethttpomithttp2 -trimpath -gcflags=all=-l -ldflags="-s -w"
# make coldstart's runs per function.
RUNS ?= 30
# Where make build writes <function>/bootstrap. make coldstart and the
# bootstraps' test build for this machine into another folder by setting it
# and LAMBDA_ENV=CGO_ENABLED=0.
BIN_DIR ?= bin

STAGE ?= dev
BENCH ?= .
# make loadtest: concurrent clients and the length of each scenario (docs/performance.md).
CLIENTS ?= 8
DURATION ?= 30s
CONFLICT_DURATION ?= 5s
AUTH_CLIENTS ?= 16
AUTH_DURATION ?= 15s
FUZZTIME ?= 5s

.PHONY: help install devstack run listen metrics test test-unit fuzz reset build size coldstart loadtest deploy migrate-card-secrets invoke sam-env lint vet staticcheck cfn-lint openapi-lint generate bench clean

help: ## list the targets
	@grep -E '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

install: ## install Java, Node.js, the emulators, stripe-mock and AWS's Lambda Runtime Interface Emulator into .cache (idempotent)
	@infra/local/install.sh

# The orchestrator is built to a temporary name and renamed, so a running
# copy (another `make run`) is never overwritten in place.
devstack:
	@mkdir -p $(CACHE)/bin
	@$(GO) build -o $(DEVSTACK).$$$$ ./infra/local/cmd/devstack && mv -f $(DEVSTACK).$$$$ $(DEVSTACK)

# devstack (and listen) is given make's pid ($$PPID of the recipe's shell,
# which exec replaces): GNU make does not pass SIGINT on to its children, so
# it watches make to stop when make gets it (docs/local.md).
run: install devstack ## start the emulators and the dev server on 127.0.0.1:PORT (3000); Ctrl-C stops all
	@exec $(DEVSTACK) run -make-pid $$PPID

listen: ## an HTTPS webhook receiver on 127.0.0.1:LISTEN_PORT (8443) for `make run`; TOKEN=<token> creates the company's own endpoint there (EVENTS=<kinds>), COMPANY=<id> points the console's webhook_url at it
	@mkdir -p $(CACHE)/bin
	@$(GO) build -o $(LISTEN).$$$$ ./infra/local/cmd/listen && mv -f $(LISTEN).$$$$ $(LISTEN)
	@exec $(LISTEN) -make-pid $$PPID

metrics: devstack ## the metrics (EMF lines) the functions of `make run` have written so far, summed in a table
	@$(DEVSTACK) metrics

# The tests run with the deployed build's net/http: without HTTP/2. Each
# package whose tests drive the functions saves the AWS calls they made
# into a folder (pkg/app/apptest, APPTEST_CALLS); grantcheck then fails
# unless every action a function is granted was made by some test.
# Test binaries are linked without the symbol table and DWARF (-s -w),
# which a test run never reads: a failure's file and line and the race
# detector's reports come from the runtime's own tables. Linking ~130 test
# binaries is most of a run's time, and this takes about 40 % off it.
# The linker and the tests, short-lived processes, collect garbage a
# quarter as often (GOGC=400): about a fifth less CPU for some more memory.
TEST_LDFLAGS = -ldflags='-s -w'
TEST_GOGC = GOGC=400

test: install devstack vet staticcheck ## vet, staticcheck, go test -race, every granted AWS action used, then make fuzz, against throwaway stacks
	@calls=$$(mktemp -d); trap 'rm -rf "$$calls"' EXIT; \
	$(DEVSTACK) exec -- env $(TEST_GOGC) APPTEST_CALLS="$$calls" $(GO) test -race -count=1 $(TEST_LDFLAGS) -tags nethttpomithttp2 ./...; \
	$(GO) run ./pkg/app/apptest/grantcheck "$$calls"
	@$(MAKE) fuzz

# The unit run: go test -short, in which storetest, queuetest and localtest
# stand up an in-memory DynamoDB, SQS and S3 in each test process instead
# of the emulators (docs/architecture.md, "Where tests and tools live"). It
# leaves out the end-to-end tests (pkg/e2e, pkg/apiclient's walk-throughs),
# the dashboard's browser tests (pkg/dashboard/browsertest: Chromium, which
# make install brings) and the Cognito adapter's (pkg/identity/cognitopool:
# it signs users in, which cognitotest's in-memory stand-in does not), which
# make test runs; vet and -race are make test's too. Its packages mostly
# wait (the sandbox operator's seconds, long polls), so four run at once on
# 2 cores, and within a package four of the tests that wait (t.Parallel).
UNIT_PACKAGES = $(shell $(GO) list ./pkg/... | grep -v -e '/pkg/e2e$$' -e '/pkg/apiclient$$' -e '/pkg/identity/cognitopool$$' -e '/pkg/dashboard/browsertest$$')

test-unit: ## go test -short over the domain packages (pkg/… but pkg/e2e, pkg/apiclient, pkg/dashboard/browsertest and pkg/identity/cognitopool) on in-memory DynamoDB, SQS and S3: no emulators, no make install
	@env -u AWS_ENDPOINT_URL_DYNAMODB -u AWS_ENDPOINT_URL_SQS -u AWS_ENDPOINT_URL_S3 $(TEST_GOGC) \
		$(GO) test -short -count=1 -vet=off -p 4 -parallel 4 $(TEST_LDFLAGS) -tags nethttpomithttp2 $(UNIT_PACKAGES)

# infra/tools/fuzz.sh builds each package's fuzzing binary once and runs
# its targets one after the other (how it reports, and retries Go 1.26's
# fuzzing deadline race, is in its header).
fuzz: install devstack ## run each fuzz target for FUZZTIME (default 5s) against a throwaway stack
	@$(DEVSTACK) exec -- env GO=$(GO) FUZZTIME=$(FUZZTIME) infra/tools/fuzz.sh

reset: ## wipe the local stack's data (DynamoDB, S3, the user pool, simulated Stripe's records, logs); keeps the admin key and the token, card and webhook keys
	@if [ -f $(DATA_DIR)/devstack.json ] && kill -0 "$$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' $(DATA_DIR)/devstack.json)" 2>/dev/null; then \
		echo "make reset: the local stack is running; stop it first (Ctrl-C in its terminal)" >&2; exit 1; fi
	rm -rf $(DATA_DIR)/dynamodb $(DATA_DIR)/s3 $(DATA_DIR)/cognito $(DATA_DIR)/logs $(DATA_DIR)/devstack.json $(DATA_DIR)/stripe-sim.json

build: ## build every function into bin/<function>/bootstrap for Lambda (linux/arm64)
	@for fn in $(FUNCTIONS); do \
		echo "build functions/$$fn -> $(BIN_DIR)/$$fn/bootstrap"; \
		$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(BIN_DIR)/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

size: build ## print each bin/<function>/bootstrap's size and gzipped size; fails above its target (3.0 MiB gzipped; 3.5 with Stripe's library; 4.0 the dashboard)
	@$(GO) run ./infra/tools/cmd/footprint size -dir $(BIN_DIR)

# The bootstraps are built for this machine (to be run), with the flags of
# make build, next to a hello-world function built the same way, and each
# started by AWS's Runtime Interface Emulator (make install builds it).
coldstart: install ## build each function and a hello-world for this machine; print exec → first /next (the Runtime Interface Emulator's init duration) over RUNS (30) starts; fails above 2.5 × the hello-world's median
	@rm -rf $(CACHE)/coldstart
	@$(MAKE) build LAMBDA_ENV=CGO_ENABLED=0 BIN_DIR=$(CACHE)/coldstart >/dev/null
	@CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(CACHE)/coldstart/hello/bootstrap ./infra/tools/footprint/hello
	@$(GO) run ./infra/tools/cmd/footprint coldstart -dir $(CACHE)/coldstart -runs $(RUNS)

# The folder under functions/ of a function's LogicalId:
# WalletsFunction -> wallets, PayoutWorkerFunction -> payout-worker.
function-dir = $(shell echo '$(1)' | sed -E 's/Function$$//; s/([a-z0-9])([A-Z])/\1-\2/g' | tr 'A-Z' 'a-z')

# sam build (BuildMethod: makefile) runs `make build-<LogicalId>` with
# ARTIFACTS_DIR set; by hand it writes .aws-sam/build/<LogicalId>/bootstrap.
build-%: ## build one function (the folder of its LogicalId) into $(ARTIFACTS_DIR)/bootstrap, as sam build asks
	@[ -d functions/$(call function-dir,$*) ] || { echo "make build-$*: no folder functions/$(call function-dir,$*)" >&2; exit 1; }
	@mkdir -p "$(or $(ARTIFACTS_DIR),$(BUILD_DIR)/$*)"
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o "$(or $(ARTIFACTS_DIR),$(BUILD_DIR)/$*)/bootstrap" ./functions/$(call function-dir,$*)

# Prints the folder of a LogicalId (used by the tests).
function-dir-%:
	@echo $(call function-dir,$*)

deploy: ## sam build && sam deploy --config-env STAGE (dev, staging or prod; default dev)
	@command -v sam >/dev/null || { echo "make deploy: the AWS SAM CLI (sam) is not installed: https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html" >&2; exit 1; }
	@case "$(STAGE)" in dev|staging|prod) ;; *) echo "make deploy: STAGE must be dev, staging or prod, not '$(STAGE)'" >&2; exit 1;; esac
	sam build
	sam deploy --config-env $(STAGE)

migrate-card-secrets: ## one-off: take the sealed card number and CVV out of the card items of STAGE's table (production: delete; sandbox: move to the secrets item; DRY_RUN=true counts them)
	@command -v aws >/dev/null || { echo "make migrate-card-secrets: the AWS CLI (aws) is not installed" >&2; exit 1; }
	@case "$(STAGE)" in dev|staging|prod) ;; *) echo "make migrate-card-secrets: STAGE must be dev, staging or prod, not '$(STAGE)'" >&2; exit 1;; esac
	@mode=$$(aws cloudformation describe-stacks --stack-name payments-$(STAGE) --query "Stacks[0].Parameters[?ParameterKey=='Mode'].ParameterValue" --output text) || exit 1; \
	eval "$$(aws configure export-credentials --format env)" && export AWS_REGION=$${AWS_REGION:-$$(aws configure get region)} && \
	$(GO) run ./infra/migrate card-secrets -table payments-$(STAGE) -mode "$$mode" $(if $(filter true,$(DRY_RUN)),-dry-run)

invoke: install ## run FN's bootstrap under AWS's Runtime Interface Emulator on EVENT (TOKEN= for Bearer TOKEN) against `make run`'s stack; print the response
	@[ -n "$(FN)" ] && [ -n "$(EVENT)" ] || { echo "usage: make invoke FN=<function> EVENT=<event.json> [TOKEN=<access token>]" >&2; exit 2; }
	@$(GO) run ./infra/local/cmd/invoke -fn "$(FN)" -event "$(EVENT)" -token "$(TOKEN)"

# SAM_ENV is the file make sam-env writes; HOST, where a container reaches
# this machine's emulators (docs/local.md).
SAM_ENV ?= $(DATA_DIR)/sam-env.json
HOST ?= host.docker.internal

sam-env: ## write SAM_ENV (.cache/sam-env.json), the --env-vars file of sam local invoke/start-api: each function's variables as make run gives them, its emulators at HOST (host.docker.internal)
	@$(GO) run ./infra/local/cmd/samenv -host "$(HOST)" -o "$(SAM_ENV)"

lint: install vet staticcheck ## gofmt -l, go vet, staticcheck, cfn-lint template.yaml, lint docs/openapi.yaml, check generated code is current
	@files=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$files" ]; then echo "gofmt would change:" >&2; echo "$$files" >&2; exit 1; fi
	@$(MAKE) cfn-lint openapi-lint
	@$(MAKE) generate
	@git diff --exit-code --stat -- $(GENERATED) || { echo "make lint: $(GENERATED) differ from docs/openapi.yaml: run make generate and commit" >&2; exit 1; }

# GENERATED is what make generate writes: from docs/openapi.yaml, and htmx from its pinned npm package.
GENERATED = pkg/apidoc/openapi.json pkg/apiclient/client.gen.go pkg/dashboard/assets/htmx.min.js

generate: install ## regenerate pkg/apidoc/openapi.json and the Go client pkg/apiclient from docs/openapi.yaml; copy htmx (pinned in infra/local/dashboard) into pkg/dashboard/assets
	$(GO) generate ./pkg/apidoc ./pkg/apiclient
	cp $(CACHE)/dashboard/node_modules/htmx.org/dist/htmx.min.js pkg/dashboard/assets/htmx.min.js

openapi-lint: install ## lint docs/openapi.yaml with Redocly CLI (pinned in infra/local/tools)
	@$(CACHE)/tools/node_modules/.bin/redocly lint --config infra/local/tools/redocly.yaml docs/openapi.yaml

# cfn-lint (Python) is installed on the project's machines; it is not
# fetched here, since the Python package registry may be out of reach.
cfn-lint:
	@command -v cfn-lint >/dev/null || { echo "make lint: cfn-lint is not installed: pip install cfn-lint" >&2; exit 1; }
	cfn-lint template.yaml

vet:
	$(GO) vet ./...

staticcheck:
	@if [ -n "$(STATICCHECK)" ]; then echo "staticcheck $(STATICCHECK_VERSION) ./..."; $(STATICCHECK) ./...; fi

bench: install devstack ## go test -run '^$' -bench BENCH (default .) -benchmem ./... against a throwaway stack
	@$(DEVSTACK) exec -- $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem ./...

# The load test is built first, so that compiling it does not run inside
# the measured stack.
loadtest: install devstack ## payouts through the dev server vs store.CreatePayout alone, 1 and 100 wallets, CLIENTS clients, DURATION each; then simulated conflicts; then card authorizations through the dev server vs store.Cards.Record alone, 1 and 100 cards, AUTH_CLIENTS clients, AUTH_DURATION each; then one bulk payout batch of 10,000 items on 1 wallet, its payout worker running
	@mkdir -p $(CACHE)/bin
	@$(GO) build -o $(CACHE)/bin/loadtest ./infra/tools/cmd/loadtest
	@$(DEVSTACK) exec -- $(CACHE)/bin/loadtest -clients $(CLIENTS) -duration $(DURATION) -conflict-duration $(CONFLICT_DURATION) \
		-auth-clients $(AUTH_CLIENTS) -auth-duration $(AUTH_DURATION)

clean: ## remove build output (bin/, .aws-sam/); keeps the installed emulators and the data (see reset)
	rm -rf .aws-sam bin $(CACHE)/bin
