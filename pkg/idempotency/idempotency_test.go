package idempotency

import (
	"testing"
)

func TestRequestHash(t *testing.T) {
	base := RequestHash("POST", "/api/v1/cards/a/fund", []byte(`{"amount":1}`))
	others := map[string]string{
		"method":          RequestHash("PUT", "/api/v1/cards/a/fund", []byte(`{"amount":1}`)),
		"path":            RequestHash("POST", "/api/v1/cards/b/fund", []byte(`{"amount":1}`)),
		"body bytes":      RequestHash("POST", "/api/v1/cards/a/fund", []byte(`{"amount": 1}`)),
		"path into body":  RequestHash("POST", "/api/v1/cards/a/fun", []byte(`d{"amount":1}`)),
		"method and path": RequestHash("POS", "T/api/v1/cards/a/fund", []byte(`{"amount":1}`)),
	}
	if len(base) != 64 || base != RequestHash("POST", "/api/v1/cards/a/fund", []byte(`{"amount":1}`)) {
		t.Fatalf("hash %q", base)
	}
	for name, h := range others {
		if h == base {
			t.Errorf("another %s, the same hash", name)
		}
	}
}
