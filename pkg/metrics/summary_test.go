package metrics_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"payments/pkg/metrics"
)

func TestSummarize(t *testing.T) {
	var log bytes.Buffer
	log.WriteString("time=2026-11-27T12:00:00Z level=INFO msg=request\n")
	payments := metrics.NewContext(context.Background(), metrics.New(&log, "payments/local", "payments"))
	worker := metrics.NewContext(context.Background(), metrics.New(&log, "payments/local", "payout-worker"))
	sweeper := metrics.NewContext(context.Background(), metrics.New(&log, "payments/local", "sweeper"))
	hooks := metrics.NewContext(context.Background(), metrics.New(&log, "payments/local", "webhook-worker"))
	for range 3 {
		metrics.Count(payments, metrics.PayoutsAccepted, metrics.Currency("XAF"), metrics.Operator("mtn"))
	}
	metrics.Count(payments, metrics.PayoutsAccepted, metrics.Currency("XOF"), metrics.Operator("orange"))
	metrics.Count(worker, metrics.PayoutsSettled, metrics.Currency("XAF"), metrics.Operator("mtn"))
	for _, n := range []int{0, 4, 2} {
		metrics.Gauge(sweeper, metrics.CardMovementsOpenPastWindow, n)
	}
	for ms := 1; ms <= 100; ms++ {
		metrics.Record(hooks, nil, metrics.Elapsed(metrics.WebhookDeliveryDelay, time.Duration(ms)*time.Millisecond))
	}
	log.WriteString(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A","Unit":"Parsecs"}]}]},"A":1}` + "\n")

	rows, invalid, err := metrics.Summarize(&log)
	if err != nil || invalid != 1 {
		t.Fatalf("Summarize: %d invalid, %v; want 1 invalid", invalid, err)
	}
	var table bytes.Buffer
	if err := metrics.WriteTable(&table, rows); err != nil {
		t.Fatal(err)
	}
	want := []struct{ metric, function, dims, value string }{
		{"CardMovementsOpenPastWindow", "sweeper", "-", "last=2 max=4"},
		{"PayoutsAccepted", "payments", "Currency=XAF Operator=mtn", "3"},
		{"PayoutsAccepted", "payments", "Currency=XOF Operator=orange", "1"},
		{"PayoutsSettled", "payout-worker", "Currency=XAF Operator=mtn", "1"},
		{"WebhookDeliveryDelay", "webhook-worker", "-", "n=100 p50=50.0ms p99=99.0ms max=100.0ms"},
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if len(lines) != len(want)+1 || !strings.HasPrefix(lines[0], "METRIC") {
		t.Fatalf("table:\n%s", table.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i+1]); strings.Join(got, " ") != strings.Join(strings.Fields(w.metric+" "+w.function+" "+w.dims+" "+w.value), " ") {
			t.Errorf("row %d: %q, want %s %s %s %s", i, lines[i+1], w.metric, w.function, w.dims, w.value)
		}
	}
}
