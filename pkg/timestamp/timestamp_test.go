package timestamp

import (
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 23, 16, 11, 18, 120_456_789, time.UTC), "2026-11-23T16:11:18.120Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("WAT", 3600)), "2026-01-02T02:04:05.000Z"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := Format(tt.in)
			if got != tt.want {
				t.Fatalf("Format = %s, want %s", got, tt.want)
			}
			back, err := Parse(got)
			if err != nil || !back.Equal(Of(tt.in)) {
				t.Fatalf("Parse(%s) = %v, %v; want %v", got, back, err, Of(tt.in))
			}
		})
	}
}
