package devserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"payments/infra/local/stack"
	"payments/pkg/function"
)

// Schedule is a function that EventBridge invokes on a fixed rate.
type Schedule struct {
	// Function is the function's folder name under functions/.
	Function string
	// Interval is the rate; ParseRate reads it from the template.
	Interval time.Duration
	// Handler is the function's Lambda handler.
	Handler function.ScheduleHandler
	// Timeout is the function's timeout (default one minute).
	Timeout time.Duration
}

// ParseRate returns the interval of a schedule expression of the form
// "rate(N minute|minutes|hour|hours|day|days)". Cron expressions are not
// supported locally.
func ParseRate(expr string) (time.Duration, error) {
	inner, isRate := strings.CutPrefix(strings.TrimSpace(expr), "rate(")
	inner, closed := strings.CutSuffix(inner, ")")
	if !isRate || !closed {
		return 0, fmt.Errorf("schedule %q: only rate(N unit) expressions run locally", expr)
	}
	num, unit, _ := strings.Cut(strings.TrimSpace(inner), " ")
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("schedule %q: the rate must be a positive integer", expr)
	}
	units := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}
	unit = strings.TrimSpace(unit)
	d, ok := units[strings.TrimSuffix(unit, "s")]
	if plural := strings.HasSuffix(unit, "s"); !ok || plural != (n > 1) {
		return 0, fmt.Errorf("schedule %q: the unit must be minute(s), hour(s) or day(s), singular for 1", expr)
	}
	return time.Duration(n) * d, nil
}

// RunSchedule invokes s's handler every s.Interval, the first time one
// interval after the start, until ctx is done; it waits for the invocation
// in progress. Invocations do not overlap: a slow one delays the next.
func RunSchedule(ctx context.Context, s Schedule, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("function", s.Function)
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			ictx, cancel := context.WithTimeout(LambdaContext(context.WithoutCancel(ctx), s.Function), orDefault(s.Timeout))
			if _, err := callSchedule(ictx, s.Handler, NewScheduledEvent(s.Function, now)); err != nil {
				log.Error("scheduled invocation failed", "err", err)
			}
			cancel()
		}
	}
}

func callSchedule(ctx context.Context, h function.ScheduleHandler, e events.EventBridgeEvent) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, e)
}

// NewScheduledEvent builds the event EventBridge sends to function for the
// schedule firing at t.
func NewScheduledEvent(function string, t time.Time) events.EventBridgeEvent {
	return events.EventBridgeEvent{
		Version:    "0",
		ID:         uuid.NewString(),
		DetailType: "Scheduled Event",
		Source:     "aws.events",
		AccountID:  stack.AccountID,
		Time:       t.UTC().Truncate(time.Second),
		Region:     stack.Region,
		Resources:  []string{"arn:aws:events:" + stack.Region + ":" + stack.AccountID + ":rule/" + function + "-schedule"},
		Detail:     json.RawMessage("{}"),
	}
}
