package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkDecode measures strict decoding of a payout-sized body.
func BenchmarkDecode(b *testing.B) {
	const body = `{"name":"Acme","amount":1500,"count":3,"nested":{"flag":true}}`
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var p payload
		if err := Decode(r, &p); err != nil {
			b.Fatal(err)
		}
	}
}
