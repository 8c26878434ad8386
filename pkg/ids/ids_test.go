package ids

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestNewV7(t *testing.T) {
	at := time.Date(2025, 5, 1, 10, 0, 0, 123_456_789, time.UTC)
	var prev string
	for i := range 100 {
		id := NewV7(at)
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %s: version %d variant %v, %v", id, u.Version(), u.Variant(), err)
		}
		sec, nsec := u.Time().UnixTime()
		if got := time.Unix(sec, nsec).UnixMilli(); got != at.UnixMilli() {
			t.Fatalf("id %s holds ms %d, want %d", id, got, at.UnixMilli())
		}
		if !strings.HasPrefix(id, V7Prefix(at.UnixMilli())) {
			t.Fatalf("id %s does not start with %s", id, V7Prefix(at.UnixMilli()))
		}
		if i > 0 && id <= prev {
			t.Fatalf("id %s not after %s", id, prev)
		}
		prev = id
	}
	if later := NewV7(at.Add(time.Millisecond)); later <= prev {
		t.Fatalf("id of the next millisecond %s sorts before %s", later, prev)
	}
}

func TestIsUUID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", true},
		{"0190A1B2-C3D4-7E5F-8A6B-7C8D9E0F1A2B", true},
		{"{0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b}", false},
		{"urn:uuid:0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b", false},
		{"0190a1b2c3d47e5f8a6b7c8d9e0f1a2b", false},
		{"0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2z", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsUUID(tt.in); got != tt.want {
			t.Errorf("IsUUID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
