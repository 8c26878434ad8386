package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// ErrNotEMF reports a line that is not an EMF document: not a JSON object
// or one without the _aws member.
var ErrNotEMF = errors.New("metrics: not an EMF line")

// ErrInvalid reports an EMF document that breaks the specification.
var ErrInvalid = errors.New("metrics: invalid EMF line")

// Units are the units CloudWatch accepts.
var Units = []Unit{
	"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None",
}

// Sample is one metric value of a parsed line.
type Sample struct {
	Namespace string
	Name      string
	Unit      Unit
	Values    []float64
	// Dimensions are the values of the line's dimensions (Function,
	// Currency, …), whichever sets publish them.
	Dimensions map[string]string
	// Timestamp is the line's time, in milliseconds since the epoch.
	Timestamp int64
}

// Limits of the specification.
const (
	maxDimensions = 30  // keys in one dimension set
	maxValues     = 100 // values of one metric
	maxName       = 255 // characters of a namespace or metric name
	maxDimValue   = 1024
)

// Parse checks line against the EMF specification and returns its
// samples: ErrNotEMF when it is not an EMF document at all (another log
// line), ErrInvalid, wrapped with the rule broken, when it is one that
// CloudWatch would reject.
func Parse(line []byte) ([]Sample, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return nil, ErrNotEMF
	}
	rawAWS, ok := root["_aws"]
	if !ok {
		return nil, ErrNotEMF
	}
	var meta struct {
		Timestamp         *json.Number      `json:"Timestamp"`
		CloudWatchMetrics []json.RawMessage `json:"CloudWatchMetrics"`
	}
	if err := json.Unmarshal(rawAWS, &meta); err != nil {
		return nil, fmt.Errorf("%w: _aws is not an object: %v", ErrInvalid, err)
	}
	if meta.Timestamp == nil {
		return nil, fmt.Errorf("%w: _aws.Timestamp is missing", ErrInvalid)
	}
	ts, err := meta.Timestamp.Int64()
	if err != nil || ts < 0 {
		return nil, fmt.Errorf("%w: _aws.Timestamp is not milliseconds since the epoch", ErrInvalid)
	}
	if meta.CloudWatchMetrics == nil {
		return nil, fmt.Errorf("%w: _aws.CloudWatchMetrics is missing", ErrInvalid)
	}
	var samples []Sample
	for i, raw := range meta.CloudWatchMetrics {
		s, err := parseDirective(root, raw, ts)
		if err != nil {
			return nil, fmt.Errorf("%w: directive %d: %v", ErrInvalid, i, err)
		}
		samples = append(samples, s...)
	}
	return samples, nil
}

func parseDirective(root map[string]json.RawMessage, raw json.RawMessage, ts int64) ([]Sample, error) {
	var d struct {
		Namespace  *string    `json:"Namespace"`
		Dimensions [][]string `json:"Dimensions"`
		Metrics    []struct {
			Name              string `json:"Name"`
			Unit              *Unit  `json:"Unit"`
			StorageResolution *int   `json:"StorageResolution"`
		} `json:"Metrics"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("not a metric directive: %v", err)
	}
	if d.Namespace == nil || *d.Namespace == "" || utf8.RuneCountInString(*d.Namespace) > maxName {
		return nil, errors.New("the Namespace must have 1 to 255 characters")
	}
	if d.Dimensions == nil {
		return nil, errors.New("the Dimensions member is missing")
	}
	dims := map[string]string{}
	for _, set := range d.Dimensions {
		if len(set) > maxDimensions {
			return nil, fmt.Errorf("a dimension set has %d keys, more than %d", len(set), maxDimensions)
		}
		for _, k := range set {
			var v string
			if err := json.Unmarshal(root[k], &v); err != nil {
				return nil, fmt.Errorf("dimension %q is not a string member of the root", k)
			}
			if v == "" || utf8.RuneCountInString(v) > maxDimValue {
				return nil, fmt.Errorf("dimension %q must have 1 to 1024 characters", k)
			}
			dims[k] = v
		}
	}
	if len(d.Metrics) == 0 || len(d.Metrics) > MaxMetrics {
		return nil, fmt.Errorf("%d metrics: a directive holds 1 to %d", len(d.Metrics), MaxMetrics)
	}
	var out []Sample
	for _, m := range d.Metrics {
		if m.Name == "" || utf8.RuneCountInString(m.Name) > maxName {
			return nil, errors.New("a metric Name must have 1 to 255 characters")
		}
		unit := Unit("None")
		if m.Unit != nil {
			unit = *m.Unit
			if !slices.Contains(Units, unit) {
				return nil, fmt.Errorf("metric %s: unit %q is not one of CloudWatch's", m.Name, unit)
			}
		}
		if r := m.StorageResolution; r != nil && *r != 1 && *r != 60 {
			return nil, fmt.Errorf("metric %s: StorageResolution must be 1 or 60", m.Name)
		}
		values, err := numbers(root[m.Name])
		if err != nil {
			return nil, fmt.Errorf("metric %s: %v", m.Name, err)
		}
		out = append(out, Sample{Namespace: *d.Namespace, Name: m.Name, Unit: unit, Values: values, Dimensions: dims, Timestamp: ts})
	}
	return out, nil
}

// numbers reads a metric's root member: a number or an array of 1 to 100
// numbers.
func numbers(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, errors.New("no member of that name on the root")
	}
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return []float64{one}, nil
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("its value is not a number or an array of numbers")
	}
	if len(many) == 0 || len(many) > maxValues {
		return nil, fmt.Errorf("%d values: a metric holds 1 to %d", len(many), maxValues)
	}
	return many, nil
}
