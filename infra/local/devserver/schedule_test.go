package devserver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		expr string
		want time.Duration // 0 = error
	}{
		{"rate(1 minute)", time.Minute},
		{"rate(5 minutes)", 5 * time.Minute},
		{"rate(1 hour)", time.Hour},
		{"rate(2 hours)", 2 * time.Hour},
		{"rate(1 day)", 24 * time.Hour},
		{" rate(10 minutes) ", 10 * time.Minute},
		{"rate(1 minutes)", 0},
		{"rate(2 minute)", 0},
		{"rate(0 minutes)", 0},
		{"rate(x minutes)", 0},
		{"rate(5 seconds)", 0},
		{"cron(0 12 * * ? *)", 0},
		{"", 0},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := ParseRate(tt.expr)
			if tt.want == 0 {
				if err == nil {
					t.Errorf("accepted as %v", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestRunSchedule(t *testing.T) {
	var calls atomic.Int32
	got := make(chan events.EventBridgeEvent, 10)
	s := Schedule{Function: "sweeper", Interval: 50 * time.Millisecond, Handler: func(ctx context.Context, e events.EventBridgeEvent) (any, error) {
		if _, ok := lambdacontext.FromContext(ctx); !ok {
			t.Error("no Lambda context")
		}
		if calls.Add(1) == 1 {
			panic("a panic does not stop the schedule")
		}
		got <- e
		return nil, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		RunSchedule(ctx, s, nil)
	}()
	e := <-got
	if time.Since(start) < 100*time.Millisecond {
		t.Errorf("second invocation after %v, before two intervals", time.Since(start))
	}
	cancel()
	<-done
	if e.DetailType != "Scheduled Event" || e.Source != "aws.events" || e.ID == "" || len(e.Resources) != 1 || string(e.Detail) != "{}" {
		t.Errorf("unexpected event %+v", e)
	}
}
