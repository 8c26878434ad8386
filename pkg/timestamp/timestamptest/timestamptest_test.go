package timestamptest

import (
	"slices"
	"testing"
)

func TestStrays(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"the format", `{"at":"2026-11-23T16:11:18.120Z","list":[{"created_at":"2026-01-02T03:04:05.000Z"}]}`, nil},
		{"no decimals", `{"at":"2026-11-23T16:11:18Z"}`, []string{".at = 2026-11-23T16:11:18Z"}},
		{"trailing zeros trimmed", `{"a":{"b":"2026-11-23T16:11:18.12Z"}}`, []string{".a.b = 2026-11-23T16:11:18.12Z"}},
		{"nanoseconds", `{"x":["2026-11-23T16:11:18.123456789Z"]}`, []string{".x[0] = 2026-11-23T16:11:18.123456789Z"}},
		{"an offset", `{"at":"2026-11-23T17:11:18.120+01:00"}`, []string{".at = 2026-11-23T17:11:18.120+01:00"}},
		{"dates and other text are not timestamps", `{"d":"2026-11-23","s":"Tuesday","n":20261123}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Strays([]byte(tt.body))
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Strays = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, err := Strays([]byte("{")); err == nil {
		t.Fatal("Strays of a broken body: no error")
	}
}
