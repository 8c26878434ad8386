package pawapaysim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusesOffFormatRequests checks that each documented rule is enforced
// and recorded as a violation.
func TestRefusesOffFormatRequests(t *testing.T) {
	const good = `{"payoutId":"f4401bd2-1568-4140-bf2d-eb77d2b2b639","amount":"100","currency":"XAF","recipient":{"type":"MMO","accountDetails":{"phoneNumber":"237670000001","provider":"MTN_MOMO_CMR"}}}`
	tests := []struct {
		name, body, token string
		want              int
		violation         string
	}{
		{"valid", good, "tok", http.StatusOK, ""},
		{"no token", good, "", http.StatusUnauthorized, ""},
		{"unknown field", strings.Replace(good, `"amount"`, `"colour":"red","amount"`, 1), "tok", http.StatusBadRequest, "UNSUPPORTED_PARAMETER"},
		{"missing amount", strings.Replace(good, `"amount":"100",`, ``, 1), "tok", http.StatusBadRequest, "MISSING_PARAMETER"},
		{"amount a number", strings.Replace(good, `"100"`, `100`, 1), "tok", http.StatusBadRequest, "INVALID_PARAMETER"},
		{"amount with a leading zero", strings.Replace(good, `"100"`, `"0100"`, 1), "tok", http.StatusBadRequest, "amount"},
		{"decimals the provider refuses", strings.Replace(good, `"100"`, `"100.5"`, 1), "tok", http.StatusBadRequest, "decimals"},
		{"unknown provider", strings.Replace(good, "MTN_MOMO_CMR", "MTN_CM", 1), "tok", http.StatusBadRequest, "provider"},
		{"phone with a plus", strings.Replace(good, `"237670000001"`, `"+237670000001"`, 1), "tok", http.StatusBadRequest, "phoneNumber"},
		{"v1 metadata", strings.Replace(good, `"currency"`, `"metadata":[{"fieldName":"a","fieldValue":"b"}],"currency"`, 1), "tok", http.StatusBadRequest, "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, err := New(Config{Token: "tok"})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, "/v2/payouts", strings.NewReader(tt.body))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("answered %d, want %d: %s", rec.Code, tt.want, rec.Body)
			}
			v := sim.Violations()
			if (tt.violation == "") != (len(v) == 0) || (tt.violation != "" && !strings.Contains(v[0], tt.violation)) {
				t.Fatalf("violations %v, want one naming %q", v, tt.violation)
			}
		})
	}
}
