package issuer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"payments/pkg/providers/issuer"
)

// TestSecretsAreNotPrinted: no format or log of Secrets, alone or inside a
// value, shows the number or the CVV.
func TestSecretsAreNotPrinted(t *testing.T) {
	s := issuer.Secrets{Number: "4111111111111111", CVV: "737"}
	wrapped := struct {
		Card    string
		Secrets issuer.Secrets
	}{"card_1", s}
	encoded, err := json.Marshal(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	// Without the time, whose digits may hold the CVV's by chance.
	noTime := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	slog.New(slog.NewJSONHandler(&logged, noTime)).Info("issued", "secrets", s, "wrapped", wrapped)
	slog.New(slog.NewTextHandler(&logged, noTime)).Info("issued", "secrets", s, "ptr", &s)

	tests := []struct {
		name, out string
	}{
		{"%v %+v %#v", fmt.Sprintf("%v %+v %#v", s, s, s)},
		{"%s %q", fmt.Sprintf("%s %q", s, s)},
		{"pointer", fmt.Sprintf("%v %+v %#v", &s, &s, &s)},
		{"inside a struct", fmt.Sprintf("%v %+v %#v", wrapped, wrapped, wrapped)},
		{"inside a slice", fmt.Sprint([]issuer.Secrets{s})},
		{"encoding/json", string(encoded)},
		{"slog", logged.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.out, s.Number) || strings.Contains(tt.out, s.CVV) {
				t.Fatalf("the secrets show: %s", tt.out)
			}
			if !strings.Contains(tt.out, "redacted") {
				t.Fatalf("no trace of the redacted secrets: %s", tt.out)
			}
		})
	}
}
