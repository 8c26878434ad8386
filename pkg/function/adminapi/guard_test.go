package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"payments/pkg/httpapi"
	"payments/pkg/metrics"
)

// TestGuardRefusalsLoggedAndCounted: the console's guard admits the one
// admin key, and logs and counts each refusal with its reason, never the
// key sent.
func TestGuardRefusalsLoggedAndCounted(t *testing.T) {
	var logs bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	g := guard("the-admin-key")
	tests := []struct {
		name string
		keys []string
		why  string // "" when admitted
	}{
		{"right key", []string{"the-admin-key"}, ""},
		{"no key", nil, "no admin key"},
		{"wrong key", []string{"guessed-admin-key"}, "wrong admin key"},
		{"twice", []string{"the-admin-key", "the-admin-key"}, "admin key sent more than once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			var emf bytes.Buffer
			r := httptest.NewRequest("GET", "/api/v1/admin/companies", nil)
			r = r.WithContext(metrics.NewContext(r.Context(), metrics.New(&emf, "payments/test", "admin")))
			for _, k := range tt.keys {
				r.Header.Add(KeyHeader, k)
			}
			ctx, err := g(r)
			if tt.why == "" {
				if err != nil || httpapi.Operator(ctx) == "" || logs.Len() != 0 || emf.Len() != 0 {
					t.Fatalf("admitted: %v, operator %q, logged %s, counted %s", err, httpapi.Operator(ctx), logs.Bytes(), emf.Bytes())
				}
				return
			}
			if !errors.Is(err, httpapi.ErrUnauthorized) {
				t.Fatalf("err = %v, want ErrUnauthorized", err)
			}
			var line struct{ Level, Msg, Reason, SourceIP string }
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("%v: %s", err, logs.Bytes())
			}
			if line.Level != "WARN" || line.Msg != "admin authentication refused" || line.Reason != tt.why {
				t.Errorf("logged %+v, want WARN with reason %q", line, tt.why)
			}
			if strings.Contains(logs.String(), "admin-key") {
				t.Errorf("the key sent is in the log: %s", logs.Bytes())
			}
			samples, err := metrics.Parse(emf.Bytes())
			if err != nil || len(samples) == 0 || samples[0].Name != metrics.AdminAuthFailures {
				t.Errorf("counted %+v (%v) from %s, want %s", samples, err, emf.Bytes(), metrics.AdminAuthFailures)
			}
		})
	}
}
