package footprint_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"payments/infra/local/rie"
	"payments/infra/local/stack"
	"payments/infra/tools/footprint"
)

// TestMain lets the test binary stand in for a bootstrap: with
// FOOTPRINT_ROLE set it is a function that, at init, connects to its
// DynamoDB endpoint ("connect") or exits ("exit") before serving as
// aws-lambda-go does.
func TestMain(m *testing.M) {
	switch os.Getenv("FOOTPRINT_ROLE") {
	case "":
		os.Exit(m.Run())
	case "exit":
		os.Exit(3)
	case "connect": // as a call would: wait for an answer (here, the close)
		if c, err := net.Dial("tcp", os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")[len("http://"):]); err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}
	lambda.Start(func(context.Context) (string, error) { return "ok", nil })
}

func TestColdStart(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := stack.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	base := []string{"AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9"}
	tests := []struct {
		role      string
		wantConns int64
		wantErr   error
	}{
		{"plain", 0, nil},
		{"connect", 1, nil},
		{"exit", 0, footprint.ErrInit},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := footprint.ColdStart(ctx, rie.Binary(root), self, append(base, "FOOTPRINT_ROLE="+tt.role))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ColdStart: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if s.Init <= 0 || s.Connections != tt.wantConns {
				t.Errorf("got %+v, want an init time and %d connections", s, tt.wantConns)
			}
		})
	}
}

func TestSizes(t *testing.T) {
	dir := t.TempDir()
	for fn, size := range map[string]int{"zeros": 1 << 20, "empty": 0} {
		os.MkdirAll(filepath.Join(dir, fn), 0o755)
		if err := os.WriteFile(filepath.Join(dir, fn, "bootstrap"), make([]byte, size), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := footprint.Sizes(dir, []string{"zeros", "empty"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Bytes != 1<<20 || got[0].Gzip <= 0 || got[0].Gzip > 4<<10 || got[1].Bytes != 0 || got[1].Gzip <= 0 {
		t.Errorf("sizes %+v: want 1 MiB of zeros gzipped to a few KiB, and an empty file to a gzip header", got)
	}
	if _, err := footprint.Sizes(dir, []string{"missing"}); err == nil {
		t.Error("no error for a missing bootstrap")
	}
}

func TestSummarize(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	tests := []struct {
		in   []time.Duration
		want footprint.Stats
	}{
		{nil, footprint.Stats{}},
		{ms(5), footprint.Stats{Min: 5 * time.Millisecond, Median: 5 * time.Millisecond, Max: 5 * time.Millisecond}},
		{ms(9, 1, 5), footprint.Stats{Min: time.Millisecond, Median: 5 * time.Millisecond, Max: 9 * time.Millisecond}},
		{ms(4, 1, 2, 8), footprint.Stats{Min: time.Millisecond, Median: 2 * time.Millisecond, Max: 8 * time.Millisecond}},
	}
	for _, tt := range tests {
		if got := footprint.Summarize(tt.in); got != tt.want {
			t.Errorf("Summarize(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
