package devserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/infra/local/stack"
	"payments/pkg/function/operatorcallbacks"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
)

// startupModeEnv, when set, makes TestStartupNotices the start-up it
// watches: in a process of its own, so that what a process says once is
// not said already by another test's functions.
const startupModeEnv = "DEVSERVER_STARTUP_MODE"

// TestStartupNotices starts the whole function set as make run does, in
// sandbox mode and in production mode, each in a process of its own, and
// reads its log (JSON lines at INFO, make run's level): nothing at WARN or
// above, and each notice of the mode once, at INFO. Sandbox mode refuses
// the operator's callbacks (no key: no aggregator calls back); production
// mode has no KYC verifier and no bank adapter, which ten functions build
// providers for.
func TestStartupNotices(t *testing.T) {
	if mode := os.Getenv(startupModeEnv); mode != "" {
		startFunctions(t, mode)
		return
	}
	for _, tt := range []struct {
		mode string
		want map[string]int // notice → lines
	}{
		{"sandbox", map[string]int{operatorcallbacks.NoCallbackKeyNotice: 1, services.NoAdapterNotice: 0}},
		{"production", map[string]int{operatorcallbacks.NoCallbackKeyNotice: 0, services.NoAdapterNotice: 1}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStartupNotices$", "-test.count=1")
			cmd.Env = append(os.Environ(), startupModeEnv+"="+tt.mode)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("start-up in %s mode: %v\n%s", tt.mode, err, out)
			}
			got := map[string]int{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var rec struct{ Level, Msg string }
				if json.Unmarshal(sc.Bytes(), &rec) != nil {
					continue // go test's own lines
				}
				var level slog.Level
				if err := level.UnmarshalText([]byte(rec.Level)); err != nil {
					t.Errorf("a line of level %q: %s", rec.Level, sc.Bytes())
				}
				if level >= slog.LevelWarn {
					t.Errorf("start-up logged at %s: %s", rec.Level, sc.Bytes())
				}
				if _, ok := tt.want[rec.Msg]; ok {
					got[rec.Msg]++
					if level != slog.LevelInfo {
						t.Errorf("%q at %s, want INFO", rec.Msg, rec.Level)
					}
				}
			}
			for msg, n := range tt.want {
				if got[msg] != n {
					t.Errorf("%q logged %d times at start-up, want %d", msg, got[msg], n)
				}
			}
		})
	}
}

// startFunctions builds every function of the template in mode, with the
// simulations make run serves beside them, logging JSON at INFO to
// standard error.
func startFunctions(t *testing.T, mode string) {
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(log)
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	// As make run: the callbacks' key is simulated pawaPay's, in production
	// mode only.
	delete(res.Params, "OperatorCallbackPublicKey")
	res.Params["Mode"] = mode
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api := "http://127.0.0.1:1" + httpapi.BasePath // nothing is called at start-up
	if _, err := devserver.StartAggregator(ctx, res, api, 0, log); err != nil {
		t.Fatal(err)
	}
	if _, err := devserver.StartIssuer(ctx, res, api, os.Getenv(stack.StripeMockEnv), 0, "", log); err != nil {
		t.Fatal(err)
	}
	if _, err := devserver.Build(ctx, tpl, res, localtest.SQSClient(t), log); err != nil {
		t.Fatal(err)
	}
}
