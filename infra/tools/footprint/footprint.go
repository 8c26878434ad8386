// Package footprint measures what a function costs before it serves a
// request: the size of its bootstrap as deployed (make size) and the time
// from exec to its first request for an invocation (make coldstart),
// under AWS's Runtime Interface Emulator, against a hello-world floor.
package footprint

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"payments/infra/local/rie"
	"payments/infra/tools/measure"
	"payments/pkg/function"
)

// MaxGzipBytes is the size target of a bootstrap, gzipped: 3.0 MiB.
const MaxGzipBytes = 3 << 20

// MaxGzipBytesCardIssuer is the size target of a function that calls the
// card issuer's API (granted ISSUER_API_KEY_ARN), gzipped: 3.5 MiB. It
// links Stripe's library, stripe-go, whose object model comes whole with
// any call (every error can carry a PaymentIntent, a PaymentMethod, a
// SetupIntent…): about 0.25 MiB gzipped that the linker cannot leave out
// (docs/footprint.md).
const MaxGzipBytesCardIssuer = 7 << 19

// MaxGzipBytesDashboard is the size target of the dashboard function,
// gzipped: 4.0 MiB. It is one function for every page of the company
// dashboard, so it links what the payments, cards (Stripe's library
// included), customers and webhooks functions serve, and Cognito's client
// besides; one person's visit stays on one warm execution environment
// across every page. The payments function alone is 3.02 MiB
// (docs/footprint.md, "The dashboard").
const MaxGzipBytesDashboard = 4 << 20

// MaxGzip returns the size target of function fn.
func MaxGzip(fn string) int64 {
	if fn == "dashboard" {
		return MaxGzipBytesDashboard
	}
	for _, g := range function.Functions[fn].Grants {
		if g.Resource == "ISSUER_API_KEY_ARN" {
			return MaxGzipBytesCardIssuer
		}
	}
	return MaxGzipBytes
}

// MaxColdStartRatio is the init target: a function's median exec → first
// /next at most this many times the hello-world floor's.
const MaxColdStartRatio = 2.5

// Size is one bootstrap's size, as built and gzipped by gzip -9 (what a
// zip of it, the package Lambda is given, comes to within a few hundred
// bytes; Go's own compress/gzip compresses it about 2% less well).
type Size struct {
	Function    string
	Bytes, Gzip int64
}

// Sizes returns the size of dir/<function>/bootstrap for each function.
func Sizes(dir string, functions []string) ([]Size, error) {
	var out []Size
	for _, fn := range functions {
		path := filepath.Join(dir, fn, "bootstrap")
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("footprint: %w (build it first)", err)
		}
		var gz countingWriter
		cmd := exec.Command("gzip", "-9", "-c", path)
		cmd.Stdout = &gz
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("footprint: gzip %s: %w", path, err)
		}
		out = append(out, Size{Function: fn, Bytes: fi.Size(), Gzip: gz.n})
	}
	return out, nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// Start is one cold start: how long the bootstrap took from exec to its
// first GET …/invocation/next (the Init Duration that AWS's Runtime
// Interface Emulator logs, as Lambda reports it), and how many connections
// it opened elsewhere meanwhile (to the AWS endpoints of its environment).
type Start struct {
	Init        time.Duration
	Connections int64
}

// ErrInit reports a bootstrap that exited, or reported an init error,
// before asking for an invocation.
var ErrInit = errors.New("footprint: init failed")

// ColdStart starts bootstrap with env under the Runtime Interface Emulator
// at emulator (rie.Binary), invokes it once with the health check
// (function.HealthCheckEvent, which a function answers without its
// handler), reads the init's duration from the emulator, then stops it.
// Every AWS_ENDPOINT_URL_* of env is replaced by a listener that counts
// each connection made to it, then closes it: a call waits for its answer,
// so it is counted before init can go on.
func ColdStart(ctx context.Context, emulator, bootstrap string, env []string) (Start, error) {
	aws, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Start{}, err
	}
	defer aws.Close()
	var conns atomic.Int64
	go func() {
		for {
			c, err := aws.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	endpoint := "http://" + aws.Addr().String()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_ENDPOINT_URL_") {
			v = endpoint
		}
		vars[k] = v
	}
	inst, err := rie.Start(ctx, rie.Options{Emulator: emulator, Bootstrap: bootstrap, Env: vars, Timeout: 30 * time.Second})
	if err != nil {
		return Start{}, err
	}
	defer inst.Stop()
	name := filepath.Base(filepath.Dir(bootstrap))
	if _, err := inst.Invoke(ctx, []byte(function.HealthCheckEvent)); err != nil {
		var fe *rie.FunctionError
		if errors.As(err, &fe) {
			return Start{}, fmt.Errorf("%w: %s: %v: %s", ErrInit, name, err, tail(inst.Output()))
		}
		return Start{}, err
	}
	d, err := inst.Init(ctx)
	if err != nil {
		return Start{}, fmt.Errorf("%w: %s: %v: %s", ErrInit, name, err, tail(inst.Output()))
	}
	return Start{Init: d, Connections: conns.Load()}, nil
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return b
}

// Stats are the minimum, median and maximum of some durations.
type Stats struct{ Min, Median, Max time.Duration }

// Summarize returns the Stats of ds, which it sorts; the median is
// measure.Percentile's 50th.
func Summarize(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	slices.Sort(ds)
	return Stats{Min: ds[0], Median: measure.Percentile(ds, 50), Max: ds[len(ds)-1]}
}
