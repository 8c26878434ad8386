package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"payments/pkg/correlation"
	"payments/pkg/metrics"
)

var at = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func recorder(buf *bytes.Buffer) *metrics.Recorder {
	return metrics.New(buf, "payments/test", "payout-worker").WithClock(func() time.Time { return at })
}

// lines parses every line of buf, failing on one that is not valid EMF.
func lines(t *testing.T, buf *bytes.Buffer) [][]metrics.Sample {
	t.Helper()
	var out [][]metrics.Sample
	sc := bufio.NewScanner(buf)
	for sc.Scan() {
		s, err := metrics.Parse(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out = append(out, s)
	}
	return out
}

func TestRecorderWritesEMF(t *testing.T) {
	tests := []struct {
		name   string
		record func(ctx context.Context)
		want   []metrics.Sample
		sets   string
	}{
		{
			name: "a count with the payment's dimensions",
			record: func(ctx context.Context) {
				metrics.Count(ctx, metrics.PayoutsSettled, metrics.Currency("XAF"), metrics.Operator("mtn"))
			},
			want: []metrics.Sample{{Name: "PayoutsSettled", Unit: "Count", Values: []float64{1},
				Dimensions: map[string]string{"Function": "payout-worker", "Currency": "XAF", "Operator": "mtn"}}},
			sets: `[["Function"],[],["Currency","Operator"]]`,
		},
		{
			name: "a duration in milliseconds",
			record: func(ctx context.Context) {
				metrics.Record(ctx, nil, metrics.Elapsed(metrics.WebhookDeliveryDelay, 1500*time.Microsecond))
			},
			want: []metrics.Sample{{Name: "WebhookDeliveryDelay", Unit: "Milliseconds", Values: []float64{1.5},
				Dimensions: map[string]string{"Function": "payout-worker"}}},
			sets: `[["Function"],[]]`,
		},
		{
			name: "a gauge; an empty dimension is left out",
			record: func(ctx context.Context) {
				metrics.Gauge(ctx, metrics.CardMovementsOpenPastWindow, 3, metrics.Currency(""))
			},
			want: []metrics.Sample{{Name: "CardMovementsOpenPastWindow", Unit: "Count", Values: []float64{3},
				Dimensions: map[string]string{"Function": "payout-worker"}}},
			sets: `[["Function"],[]]`,
		},
		{
			name: "a metric named as a dimension is left out",
			record: func(ctx context.Context) {
				metrics.Record(ctx, []metrics.Dimension{metrics.Currency("USD")},
					metrics.Metric{Name: "Currency", Unit: metrics.UnitCount, Value: 1},
					metrics.Metric{Name: "Function", Unit: metrics.UnitCount, Value: 1},
					metrics.Metric{Name: "X", Unit: metrics.UnitCount, Value: 2})
			},
			want: []metrics.Sample{{Name: "X", Unit: "Count", Values: []float64{2},
				Dimensions: map[string]string{"Function": "payout-worker", "Currency": "USD"}}},
			sets: `[["Function"],[],["Currency"]]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			ctx := metrics.NewContext(correlation.NewContext(context.Background(), "req-1"), recorder(&buf))
			tt.record(ctx)
			raw := buf.String()
			if !strings.Contains(raw, `"Dimensions":`+tt.sets) {
				t.Errorf("dimension sets: want %s in %s", tt.sets, raw)
			}
			if !strings.Contains(raw, `"correlation_id":"req-1"`) {
				t.Errorf("no correlation id in %s", raw)
			}
			got := lines(t, &buf)
			if len(got) != 1 {
				t.Fatalf("%d lines, want 1", len(got))
			}
			if len(got[0]) != len(tt.want) {
				t.Fatalf("samples %+v, want %+v", got[0], tt.want)
			}
			for i, s := range got[0] {
				w := tt.want[i]
				if s.Namespace != "payments/test" || s.Name != w.Name || s.Unit != w.Unit ||
					fmt.Sprint(s.Values) != fmt.Sprint(w.Values) || fmt.Sprint(s.Dimensions) != fmt.Sprint(w.Dimensions) ||
					s.Timestamp != at.UnixMilli() {
					t.Errorf("sample %+v, want %+v", s, w)
				}
			}
		})
	}
}

func TestRecorderSplitsPastAHundredMetrics(t *testing.T) {
	var buf bytes.Buffer
	ctx := metrics.NewContext(context.Background(), recorder(&buf))
	var ms []metrics.Metric
	for i := range 150 {
		ms = append(ms, metrics.Metric{Name: fmt.Sprintf("M%d", i), Unit: metrics.UnitCount, Value: float64(i)})
	}
	metrics.Record(ctx, nil, ms...)
	if n := strings.Count(buf.String(), `"Namespace"`); n != 2 {
		t.Fatalf("%d directives, want 2 (100 and 50 metrics)", n)
	}
	got := lines(t, &buf)
	if len(got) != 1 || len(got[0]) != 150 {
		t.Fatalf("got %d lines, first of %d samples; want one line of 150", len(got), len(got[0]))
	}
}

// TestNothingToRecord: a line whose every metric cannot be written (not a
// number JSON carries, or named as a member of the line) is not written.
func TestNothingToRecord(t *testing.T) {
	for _, ms := range [][]metrics.Metric{
		nil,
		{{Name: "A", Unit: metrics.UnitCount, Value: math.NaN()}, {Name: "B", Unit: metrics.UnitCount, Value: math.Inf(1)}},
		{{Name: "_aws", Unit: metrics.UnitCount, Value: 1}, {Name: "correlation_id", Unit: metrics.UnitCount, Value: 1}},
	} {
		var buf bytes.Buffer
		ctx := metrics.NewContext(correlation.NewContext(context.Background(), "req-1"), recorder(&buf))
		metrics.Record(ctx, nil, ms...)
		if buf.Len() != 0 {
			t.Errorf("%v wrote %s", ms, buf.String())
		}
	}
}

func TestNoRecorderRecordsNothing(t *testing.T) {
	metrics.Count(context.Background(), metrics.PayoutsAccepted) // must not panic
	if metrics.FromContext(context.Background()) != nil {
		t.Fatal("a bare context has a recorder")
	}
}

func TestParseRejects(t *testing.T) {
	valid := func(aws string, members string) string {
		return `{"_aws":` + aws + `,"Function":"f"` + members + `}`
	}
	const ts = `"Timestamp":1764244800000`
	tests := []struct {
		name, line string
		want       error
	}{
		{"not JSON", `hello`, metrics.ErrNotEMF},
		{"a log line", `{"level":"INFO","msg":"request"}`, metrics.ErrNotEMF},
		{"no timestamp", valid(`{"CloudWatchMetrics":[]}`, ``), metrics.ErrInvalid},
		{"a negative timestamp", valid(`{"Timestamp":-1,"CloudWatchMetrics":[]}`, ``), metrics.ErrInvalid},
		{"no directives", valid(`{`+ts+`}`, ``), metrics.ErrInvalid},
		{"no namespace", valid(`{`+ts+`,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"no dimensions", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Metrics":[{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"a dimension not on the root", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Nope"]],"Metrics":[{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"a dimension that is a number", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["A"]],"Metrics":[{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"no metrics", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[]}]}`, ``), metrics.ErrInvalid},
		{"an unknown unit", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A","Unit":"Parsecs"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"a value missing", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A"}]}]}`, ``), metrics.ErrInvalid},
		{"a value that is text", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A"}]}]}`, `,"A":"1"`), metrics.ErrInvalid},
		{"a bad storage resolution", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A","StorageResolution":5}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"101 metrics", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[`+strings.Repeat(`{"Name":"A"},`, 100)+`{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"101 values", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"A"}]}]}`, `,"A":[`+strings.Repeat(`1,`, 100)+`1]`), metrics.ErrInvalid},
		{"31 dimension keys", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[`+strings.Repeat(`"Function",`, 30)+`"Function"]],"Metrics":[{"Name":"A"}]}]}`, `,"A":1`), metrics.ErrInvalid},
		{"valid, with an array of values", valid(`{`+ts+`,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["Function"],[]],"Metrics":[{"Name":"A","Unit":"Count","StorageResolution":60}]}]}`, `,"A":[1,2]`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := metrics.Parse([]byte(tt.line))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Parse: %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	var buf bytes.Buffer
	ctx := metrics.NewContext(context.Background(), recorder(&buf))
	metrics.Count(ctx, metrics.PayoutsAccepted, metrics.Currency("XOF"))
	f.Add(buf.Bytes())
	f.Add([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"A"}]}]},"A":[1]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		samples, err := metrics.Parse(line)
		if err != nil {
			return
		}
		for _, s := range samples {
			if len(s.Values) == 0 || len(s.Values) > 100 || s.Namespace == "" || s.Name == "" {
				t.Fatalf("Parse accepted %s as %+v", line, s)
			}
		}
	})
}

// BenchmarkCount is the cost of one measure on the request path: one EMF
// line built and written (to io.Discard, where Lambda's is a pipe).
func BenchmarkCount(b *testing.B) {
	ctx := metrics.NewContext(correlation.NewContext(context.Background(), "req-1"), metrics.New(io.Discard, "payments/prod", "payments"))
	b.ReportAllocs()
	for b.Loop() {
		metrics.Count(ctx, metrics.PayoutsAccepted, metrics.Currency("XAF"), metrics.Operator("mtn"))
	}
}

// TestRecorderEscapes: whatever text a dimension or the correlation id
// holds, the line is valid JSON and EMF, and reads back as written (text
// that is not UTF-8 with its bad bytes replaced, as encoding/json does).
func TestRecorderEscapes(t *testing.T) {
	for _, v := range []string{`a "quoted" \ value`, "tab\tnew\nline\x00\x1f", "Yaoundé ✓", "bad \xff byte", "</script>&"} {
		var buf bytes.Buffer
		ctx := metrics.NewContext(correlation.NewContext(context.Background(), v), recorder(&buf))
		metrics.Count(ctx, metrics.PayoutsAccepted, metrics.Operator(v))
		samples, err := metrics.Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%q: %v\n%s", v, err, buf.String())
		}
		var root struct {
			CorrelationID string `json:"correlation_id"`
		}
		if err := json.Unmarshal(buf.Bytes(), &root); err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(v, "\uFFFD")
		if len(samples) != 1 || samples[0].Dimensions["Operator"] != want || root.CorrelationID != want {
			t.Errorf("%q read back as %q and %q", v, samples[0].Dimensions["Operator"], root.CorrelationID)
		}
	}
}

// FuzzRecorder: no dimension value or correlation id makes a line that is
// not valid EMF (a value past EMF's 1,024 characters is cut).
func FuzzRecorder(f *testing.F) {
	f.Add("mtn", "req-1")
	f.Add("\"\\\x00\xff", "é\n")
	f.Fuzz(func(t *testing.T, value, id string) {
		var buf bytes.Buffer
		ctx := metrics.NewContext(correlation.NewContext(context.Background(), id), recorder(&buf))
		metrics.Count(ctx, metrics.PayoutsAccepted, metrics.Operator(value))
		if _, err := metrics.Parse(buf.Bytes()); err != nil {
			t.Fatalf("%q, %q: %v\n%s", value, id, err, buf.String())
		}
	})
}
