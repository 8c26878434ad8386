package sweeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// TestStepsRunApartWithinTheirBudget: the steps of a sweep run at once,
// each within its own deadline, so a step that is stuck until its budget
// runs out (a table slow to answer) neither holds up nor fails the others;
// the report says what each did, and the sweep's error is the stuck one's.
func TestStepsRunApartWithinTheirBudget(t *testing.T) {
	started := make(chan struct{})
	steps := []step{
		{"stuck", func(ctx context.Context, _ time.Time) (int, error) {
			<-started // the others started while this one runs
			<-ctx.Done()
			return 1, ctx.Err()
		}},
		{"quick", func(ctx context.Context, _ time.Time) (int, error) {
			close(started)
			return 3, nil
		}},
		{"failing", func(ctx context.Context, _ time.Time) (int, error) {
			return 0, errors.New("the queue refused")
		}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepMargin+200*time.Millisecond)
	defer cancel()
	resp, err := run(time.Now, steps)(ctx, events.EventBridgeEvent{})
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() == context.DeadlineExceeded.Error() {
		t.Fatalf("error %v: want the stuck step's and the failing one's", err)
	}
	report := resp.(Report)
	want := Report{
		"stuck":   {Done: 1, Error: context.DeadlineExceeded.Error()},
		"quick":   {Done: 3},
		"failing": {Error: "the queue refused"},
	}
	for name, o := range want {
		if report[name] != o {
			t.Errorf("%s: %+v, want %+v", name, report[name], o)
		}
	}
}

// TestStepPanicIsItsError: a step that panics fails alone, reported, and
// the sweep goes on; with no time left the steps are still run, each
// failing on its deadline, and the sweep answers.
func TestStepPanicIsItsError(t *testing.T) {
	steps := []step{
		{"broken", func(context.Context, time.Time) (int, error) {
			panic("a bug")
		}},
		{"fine", func(context.Context, time.Time) (int, error) { return 2, nil }},
	}
	resp, err := run(time.Now, steps)(context.Background(), events.EventBridgeEvent{})
	report := resp.(Report)
	if err == nil || report["broken"].Error == "" || report["fine"] != (Outcome{Done: 2}) {
		t.Fatalf("report %+v, error %v", report, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	waiting := []step{{"waits", func(ctx context.Context, _ time.Time) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}}}
	resp, err = run(time.Now, waiting)(ctx, events.EventBridgeEvent{})
	if !errors.Is(err, context.DeadlineExceeded) || resp.(Report)["waits"].Error == "" {
		t.Fatalf("with no time left: %v %+v", err, resp)
	}
}
