package contention

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"payments/pkg/metrics"
)

func TestPolicyDo(t *testing.T) {
	lost := errors.New("lost a race")
	other := errors.New("refused")
	tests := []struct {
		name    string
		policy  Policy
		timeout time.Duration
		fails   int   // the attempt fails this many times
		failure error // with this, asking to be tried again when it is lost
		want    error
		tries   int
		// the metrics counted: ConflictsRetried, ConflictsGivenUp
		retried, givenUp int
	}{
		{"first try", Policy{Attempts: 5}, 0, 0, nil, nil, 1, 0, 0},
		{"lost races, then wins", Policy{Attempts: 5}, 0, 4, lost, nil, 5, 4, 0},
		{"keeps losing: the last error", Policy{Attempts: 5}, 0, 100, lost, lost, 5, 4, 1},
		{"not a race", Policy{Attempts: 5}, 0, 100, other, other, 1, 0, 0},
		// A deadline already past leaves no wait room, whatever the
		// jitter draws (with a second left, one draw in 3600 fits).
		{"no time left for the back-off", Policy{Attempts: 5, Base: time.Hour, Max: time.Hour}, time.Nanosecond, 100, lost, lost, 1, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var emf bytes.Buffer
			ctx := metrics.NewContext(context.Background(), metrics.New(&emf, "payments/test", "payments"))
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			tries := 0
			n, err := tt.policy.Do(ctx, func(context.Context) (bool, error) {
				tries++
				if tries <= tt.fails {
					return errors.Is(tt.failure, lost), tt.failure
				}
				return false, nil
			})
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || tries != tt.tries || n != tries {
				t.Fatalf("err %v after %d tries (Do says %d), want %v after %d", err, tries, n, tt.want, tt.tries)
			}
			retried := strings.Count(emf.String(), `"ConflictsRetried":1`)
			givenUp := strings.Count(emf.String(), `"ConflictsGivenUp":1`)
			if retried != tt.retried || givenUp != tt.givenUp {
				t.Fatalf("counted %d retried and %d given up, want %d and %d", retried, givenUp, tt.retried, tt.givenUp)
			}
		})
	}
}

func TestPolicyDoStopsWithItsContext(t *testing.T) {
	var emf bytes.Buffer
	ctx, cancel := context.WithCancel(metrics.NewContext(context.Background(), metrics.New(&emf, "payments/test", "payments")))
	p := Policy{Attempts: 5, Base: time.Hour, Max: time.Hour}
	n, err := p.Do(ctx, func(context.Context) (bool, error) {
		cancel()
		return true, errors.New("lost a race")
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("Do = %d, %v, want 1 try and context.Canceled", n, err)
	}
	if got := emf.String(); !strings.Contains(got, `"ConflictsGivenUp":1`) || strings.Contains(got, "ConflictsRetried") {
		t.Fatalf("counted %s: want the give-up alone", got)
	}
}

func TestRetryWaitIsJitteredAndCapped(t *testing.T) {
	p := Policy{Attempts: 10, Base: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	for n := 1; n < 10; n++ {
		ceiling := min(p.Base<<(n-1), p.Max)
		for range 100 {
			if w := p.Wait(n); w <= 0 || w > ceiling {
				t.Fatalf("wait(%d) = %v, want within (0, %v]", n, w, ceiling)
			}
		}
	}
}
