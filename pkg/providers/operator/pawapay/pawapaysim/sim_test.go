package pawapaysim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRefusesOffFormatRequests checks that each documented rule is enforced
// with the documented code and HTTP status (the failure codes page: 400 for
// a malformed request, 200 REJECTED for one the provider cannot serve) and
// recorded as a violation.
func TestRefusesOffFormatRequests(t *testing.T) {
	const good = `{"payoutId":"f4401bd2-1568-4140-bf2d-eb77d2b2b639","amount":"100","currency":"XAF","recipient":{"type":"MMO","accountDetails":{"phoneNumber":"237670000001","provider":"MTN_MOMO_CMR"}}}`
	drc := strings.NewReplacer(`"XAF"`, `"CDF"`, "237670000001", "243810000001", "MTN_MOMO_CMR", "VODACOM_MPESA_COD").Replace(good)
	tests := []struct {
		name, body, token string
		want              int
		status            string // the answer's status
		violation         string // "" for none; else a part of it (its code)
	}{
		{"valid", good, "tok", http.StatusOK, "ACCEPTED", ""},
		{"valid, two decimals with a trailing zero where the provider takes them", strings.Replace(drc, `"100"`, `"100.50"`, 1), "tok", http.StatusOK, "ACCEPTED", ""},
		{"valid, v2 metadata with isPII", strings.Replace(good, `"currency"`, `"metadata":[{"companyId":"c-1"},{"email":"a@b.c","isPII":true}],"currency"`, 1), "tok", http.StatusOK, "ACCEPTED", ""},
		{"no token", good, "", http.StatusUnauthorized, "", ""},
		{"unknown field", strings.Replace(good, `"amount"`, `"colour":"red","amount"`, 1), "tok", http.StatusBadRequest, "REJECTED", "UNSUPPORTED_PARAMETER"},
		{"missing amount", strings.Replace(good, `"amount":"100",`, ``, 1), "tok", http.StatusBadRequest, "REJECTED", "MISSING_PARAMETER"},
		{"amount a number", strings.Replace(good, `"100"`, `100`, 1), "tok", http.StatusBadRequest, "REJECTED", "INVALID_PARAMETER"},
		{"amount with a leading zero", strings.Replace(good, `"100"`, `"0100"`, 1), "tok", http.StatusBadRequest, "REJECTED", "INVALID_PARAMETER: amount"},
		{"amount with three decimals", strings.Replace(drc, `"100"`, `"100.555"`, 1), "tok", http.StatusBadRequest, "REJECTED", "INVALID_PARAMETER: amount"},
		{"decimals the provider refuses", strings.Replace(good, `"100"`, `"100.5"`, 1), "tok", http.StatusOK, "REJECTED", "INVALID_AMOUNT"},
		{"currency not the provider's", strings.Replace(good, `"XAF"`, `"XOF"`, 1), "tok", http.StatusOK, "REJECTED", "INVALID_CURRENCY"},
		{"unknown provider", strings.Replace(good, "MTN_MOMO_CMR", "MTN_CM", 1), "tok", http.StatusOK, "REJECTED", "INVALID_PROVIDER"},
		{"phone with a plus", strings.Replace(good, `"237670000001"`, `"+237670000001"`, 1), "tok", http.StatusOK, "REJECTED", "INVALID_PHONE_NUMBER"},
		{"phone of another country", strings.Replace(good, `"237670000001"`, `"241670000001"`, 1), "tok", http.StatusOK, "REJECTED", "INVALID_PHONE_NUMBER"},
		{"v1 metadata", strings.Replace(good, `"currency"`, `"metadata":[{"fieldName":"a","fieldValue":"b"}],"currency"`, 1), "tok", http.StatusBadRequest, "REJECTED", "metadata"},
		{"duplicate metadata field", strings.Replace(good, `"currency"`, `"metadata":[{"a":"1"},{"a":"2"}],"currency"`, 1), "tok", http.StatusBadRequest, "REJECTED", "DUPLICATE_METADATA_FIELD"},
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
			var answer struct {
				Status string `json:"status"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Status != tt.status {
				t.Fatalf("answer %s, want status %q", rec.Body, tt.status)
			}
			v := sim.Violations()
			if (tt.violation == "") != (len(v) == 0) || (tt.violation != "" && !strings.Contains(v[0], tt.violation)) {
				t.Fatalf("violations %v, want one naming %q", v, tt.violation)
			}
		})
	}
}
