package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRequestLogNamesTheCaller: the one log line of a request names the
// company or the console's operator the guard admitted it as, and nobody
// when the guard refused it.
func TestRequestLogNamesTheCaller(t *testing.T) {
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	guard := func(r *http.Request) (context.Context, error) {
		switch r.Header.Get("X-Who") {
		case "company":
			return WithCompany(r.Context(), "c1"), nil
		case "operator":
			return WithOperator(r.Context(), "arn:aws:iam::123456789012:user/ada"), nil
		}
		return nil, ErrUnauthorized
	}
	rt := NewRouter(testCatalogue, guard)
	rt.Handle("GET /thing", func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(http.StatusNoContent)
		return nil
	})
	tests := []struct {
		who, company, operator string
		status                 int
	}{
		{"company", "c1", "", http.StatusNoContent},
		{"operator", "", "arn:aws:iam::123456789012:user/ada", http.StatusNoContent},
		{"", "", "", http.StatusUnauthorized},
	}
	for _, tt := range tests {
		buf.Reset()
		r := httptest.NewRequest("GET", BasePath+"/thing", nil)
		r.Header.Set("X-Who", tt.who)
		rt.ServeHTTP(httptest.NewRecorder(), r)
		var line struct {
			Msg      string `json:"msg"`
			Status   int    `json:"status"`
			Company  string `json:"company_id"`
			Operator string `json:"operator"`
		}
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
			t.Fatalf("%q: %v: %s", tt.who, err, buf.Bytes())
		}
		if line.Msg != "request" || line.Status != tt.status || line.Company != tt.company || line.Operator != tt.operator {
			t.Errorf("%q: logged %+v, want company %q, operator %q, status %d", tt.who, line, tt.company, tt.operator, tt.status)
		}
	}
}
