// Package timestamptest checks, in tests, that JSON shows every timestamp
// in the one format of pkg/timestamp.
package timestamptest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"testing"

	"payments/pkg/timestamp"
)

// dateTime is how a timestamp in any format begins: a date, then T.
var dateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T`)

// formatted reports whether s is what timestamp.Format writes.
func formatted(s string) bool {
	t, err := timestamp.Parse(s)
	return err == nil && timestamp.Format(t) == s
}

// Strays returns the path and value of every string of the JSON body that
// is a date-time written otherwise than timestamp.Format writes it, sorted;
// an error when body is not JSON.
func Strays(body []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		case string:
			if dateTime.MatchString(v) && !formatted(v) {
				out = append(out, path+" = "+v)
			}
		}
	}
	walk("", v)
	sort.Strings(out)
	return out, nil
}

// Check fails t for every timestamp of the JSON body, what, that is not in
// the format of timestamp.Format.
func Check(t testing.TB, what string, body []byte) {
	t.Helper()
	strays, err := Strays(body)
	if err != nil {
		t.Errorf("%s: not JSON: %v", what, err)
	}
	for _, s := range strays {
		t.Errorf("%s: %s is not written as timestamp.Format writes (%s)", what, s, timestamp.Layout)
	}
}
