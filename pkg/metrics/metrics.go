// Package metrics writes the service's metrics as CloudWatch Embedded
// Metric Format (EMF) lines: one JSON object per line on the function's
// standard output, from which CloudWatch Logs extracts the metrics, with no
// call to CloudWatch at run time.
//
// A function gets its Recorder once, at start (function.Start, or the local
// dev server for each function it runs), in the context its handler is
// called with; the code that does the work records through that context
// (Count, Gauge, Record). A context without a Recorder records nothing,
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
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// RouteClass is the Class dimension: a company limit's route class
// (limits.Class).
func RouteClass(c string) Dimension { return Dimension{"Class", c} }

// Recorder writes the EMF lines of one function.
type Recorder struct {
	namespace string
	function  string
	now       func() time.Time
	out       io.Writer
}

// New returns a Recorder writing to out the lines of function (its folder
// under functions/) in namespace, each line in one Write. out must take
// writes from several goroutines at once, as os.Stdout does; SyncWriter
// makes any writer do.
func New(out io.Writer, namespace, function string) *Recorder {
	return &Recorder{namespace: namespace, function: function, now: time.Now, out: out}
}

// SyncWriter returns w taking one write at a time, for the Recorders of
// several functions writing to one buffer or to io.MultiWriter's writers.
func SyncWriter(w io.Writer) io.Writer { return &syncWriter{w: w} }

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
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

// write writes one EMF document, built by hand: a line costs a few
// allocations on the request path (BenchmarkCount), where encoding/json's
// reflection over a map cost 29.
func (r *Recorder) write(ctx context.Context, dims []Dimension, ms []Metric) {
	if !slices.ContainsFunc(ms, writable) {
		return
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"Function":`...)
	b = appendString(b, r.function)
	names := make([]string, 0, len(dims)+len(ms)+3)
	names = append(names, "Function", "_aws")
	var own []string
	for _, d := range dims {
		if d.Value == "" || slices.Contains(names, d.Name) {
			continue
		}
		b = append(b, ',')
		b = appendString(b, d.Name)
		b = append(b, ':')
		b = appendString(b, dimensionValue(d.Value))
		names = append(names, d.Name)
		own = append(own, d.Name)
	}
	if id := correlation.ID(ctx); id != "" {
		b = append(b, `,"correlation_id":`...)
		b = appendString(b, id)
		names = append(names, "correlation_id")
	}
	var defs []Metric
	for _, m := range ms {
		if slices.Contains(names, m.Name) || !writable(m) {
			continue
		}
		b = append(b, ',')
		b = appendString(b, m.Name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, m.Value, 'g', -1, 64)
		names = append(names, m.Name)
		defs = append(defs, m)
	}
	if len(defs) == 0 {
		return // every metric clashed with a member of the line
	}
	b = append(b, `,"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, r.now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[`...)
	for i := 0; i < len(defs); i += MaxMetrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Namespace":`...)
		b = appendString(b, r.namespace)
		b = append(b, `,"Dimensions":[["Function"],[]`...)
		if len(own) > 0 {
			b = append(b, ",["...)
			for j, name := range own {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendString(b, name)
			}
			b = append(b, ']')
		}
		b = append(b, `],"Metrics":[`...)
		for j, m := range defs[i:min(i+MaxMetrics, len(defs))] {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Name":`...)
			b = appendString(b, m.Name)
			if m.Unit != "" {
				b = append(b, `,"Unit":`...)
				b = appendString(b, string(m.Unit))
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}}\n"...)
	r.out.Write(b)
}

// dimensionValue returns v as EMF takes a dimension's value: UTF-8, at
// most maxDimValue characters (ours are codes, far shorter).
func dimensionValue(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if utf8.RuneCountInString(v) <= maxDimValue {
		return v
	}
	return string([]rune(v)[:maxDimValue])
}

// writable reports whether m's value is a number JSON can carry.
func writable(m Metric) bool { return !math.IsNaN(m.Value) && !math.IsInf(m.Value, 0) }

// appendString appends s to b as a JSON string, what is not UTF-8 in it
// replaced, as encoding/json does.
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

const hex = "0123456789abcdef"
