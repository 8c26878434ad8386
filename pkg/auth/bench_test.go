package auth_test

import (
	"context"
	"testing"
)

// BenchmarkAuthenticate measures the guard on every company request: parse
// and verify an ES256 token (one P-256 signature check), then read the
// company from the cache.
func BenchmarkAuthenticate(b *testing.B) {
	svc, _, _, _ := setup(b)
	tok, err := svc.Issue(context.Background(), "192.0.2.1", "cli_1", "good")
	if err != nil {
		b.Fatal(err)
	}
	header := "Bearer " + tok.AccessToken
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := svc.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}
