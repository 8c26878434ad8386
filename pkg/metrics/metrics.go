// Package metrics writes the service's metrics as CloudWatch Embedded
// Metric Format (EMF) lines: one JSON object per line on the function's
// standard output, from which CloudWatch Logs extracts the metrics, with no
// call to CloudWatch at run time.
//
// A function gets its Recorder once, at start (function.Start, or the local
// dev server for each function it runs), in the context its handler is
// called with; the code that does the work records through that context
// (Count, Duration, Record). A context without a Recorder records nothing,
// so tests and tools that do not look at metrics need nothing.
//
// Every line publishes its metrics in the Recorder's namespace
// (payments/<stage>) under two dimension sets: Function, and none (the
// stage's total); when the line has dimensions of its own (Currency,
// Operator), under a third set of exactly those. The metrics and what each
// means are listed in docs/operations.md.
package metrics

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"payments/pkg/correlation"
)

// Unit is a CloudWatch unit.
type Unit string

// The units the service's metrics use, from CloudWatch's list (Units).
const (
	UnitCount        Unit = "Count"
	UnitMilliseconds Unit = "Milliseconds"
)

// Metric is one value of one metric.
type Metric struct {
	Name  string
	Unit  Unit
	Value float64
}

// Dimension is a dimension of a line's metrics besides Function.
type Dimension struct {
	Name, Value string
}

// Currency is the Currency dimension.
func Currency(c string) Dimension { return Dimension{"Currency", c} }

// Operator is the Operator dimension.
func Operator(o string) Dimension { return Dimension{"Operator", o} }

// Recorder writes the EMF lines of one function.
type Recorder struct {
	namespace string
	function  string
	now       func() time.Time

	mu  sync.Mutex
	out io.Writer
}

// New returns a Recorder writing to out the lines of function (its folder
// under functions/) in namespace.
func New(out io.Writer, namespace, function string) *Recorder {
	return &Recorder{namespace: namespace, function: function, now: time.Now, out: out}
}

// WithClock returns r stamping its lines with now's time.
func (r *Recorder) WithClock(now func() time.Time) *Recorder {
	return &Recorder{namespace: r.namespace, function: r.function, now: now, out: r.out}
}

type recorderKey struct{}

// NewContext returns ctx carrying r.
func NewContext(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// FromContext returns the Recorder ctx carries, or nil.
func FromContext(ctx context.Context) *Recorder {
	r, _ := ctx.Value(recorderKey{}).(*Recorder)
	return r
}

// One is one occurrence of the metric name.
func One(name string) Metric { return Metric{Name: name, Unit: UnitCount, Value: 1} }

// Elapsed is d of the metric name, in milliseconds.
func Elapsed(name string, d time.Duration) Metric {
	return Metric{Name: name, Unit: UnitMilliseconds, Value: float64(d.Microseconds()) / 1000}
}

// Count records one occurrence of the metric name.
func Count(ctx context.Context, name string, dims ...Dimension) {
	Record(ctx, dims, One(name))
}

// Gauge records n of the metric name: a level measured now (a number of
// things waiting), whose Maximum over a period is what to alarm on.
func Gauge(ctx context.Context, name string, n int, dims ...Dimension) {
	Record(ctx, dims, Metric{Name: name, Unit: UnitCount, Value: float64(n)})
}

// Duration records d of the metric name, in milliseconds.
func Duration(ctx context.Context, name string, d time.Duration, dims ...Dimension) {
	Record(ctx, dims, Elapsed(name, d))
}

// Record writes one line of ms with dims through the Recorder ctx
// carries; without one it does nothing. A dimension with an empty value is
// left out, and so is a metric whose name clashes with a dimension's.
func Record(ctx context.Context, dims []Dimension, ms ...Metric) {
	r := FromContext(ctx)
	if r == nil || len(ms) == 0 {
		return
	}
	r.write(ctx, dims, ms)
}

// MaxMetrics is the most metrics one EMF directive may hold.
const MaxMetrics = 100

// The members of an EMF document (docs/operations.md links the
// specification).
type (
	metadata struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
	}
	directive struct {
		Namespace  string       `json:"Namespace"`
		Dimensions [][]string   `json:"Dimensions"`
		Metrics    []definition `json:"Metrics"`
	}
	definition struct {
		Name string `json:"Name"`
		Unit Unit   `json:"Unit,omitempty"`
	}
)

func (r *Recorder) write(ctx context.Context, dims []Dimension, ms []Metric) {
	root := map[string]any{"Function": r.function}
	sets := [][]string{{"Function"}, {}}
	var own []string
	for _, d := range dims {
		if d.Value == "" || d.Name == "Function" {
			continue
		}
		root[d.Name] = d.Value
		own = append(own, d.Name)
	}
	if len(own) > 0 {
		sets = append(sets, own)
	}
	if id := correlation.ID(ctx); id != "" {
		root["correlation_id"] = id
	}
	var defs []definition
	for _, m := range ms {
		if _, taken := root[m.Name]; taken {
			continue
		}
		root[m.Name] = m.Value
		defs = append(defs, definition{Name: m.Name, Unit: m.Unit})
	}
	var dirs []directive
	for len(defs) > 0 {
		n := min(len(defs), MaxMetrics)
		dirs = append(dirs, directive{Namespace: r.namespace, Dimensions: sets, Metrics: defs[:n]})
		defs = defs[n:]
	}
	root["_aws"] = metadata{Timestamp: r.now().UnixMilli(), CloudWatchMetrics: dirs}
	line, err := json.Marshal(root)
	if err != nil {
		return // only numbers and strings: it cannot fail
	}
	line = append(line, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Write(line)
}
