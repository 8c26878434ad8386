package samtemplate

// The template's YAML decoded into plain values (maps, slices, strings and
// numbers, with the CloudFormation short forms turned into their long
// forms, by goformation), and the helpers that read them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/awslabs/goformation/v7/intrinsics"
)

// refID returns the logical id that an intrinsic ({"Ref": id} or
// {"Fn::GetAtt": [id, attr]} or "id.Attr") points at.
func refID(v any) string {
	m := asMap(v)
	if r, ok := m["Ref"]; ok {
		return asString(r)
	}
	switch g := m["Fn::GetAtt"].(type) {
	case []any:
		if len(g) > 0 {
			return asString(g[0])
		}
	case string:
		id, _, _ := strings.Cut(g, ".")
		return id
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// listOf returns v as a list: v itself when it is one, else a list of v
// alone (IAM's Action and Resource take either), or nil for nil.
func listOf(v any) []any {
	if v == nil {
		return nil
	}
	if s, ok := v.([]any); ok {
		return s
	}
	return []any{v}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int:
		return fmt.Sprint(x)
	}
	return ""
}

func asInt(v any) int {
	n, _ := v.(int)
	return n
}

func firstOf(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseMu serializes goformation's parsing: ProcessYAML registers its YAML
// tag resolvers anew, in a map of its package, at each call.
var parseMu sync.Mutex

// parseYAML decodes a template into plain values (maps, slices, strings,
// numbers and booleans) with goformation, which turns the CloudFormation
// short forms into their long forms (!Ref x is {"Ref": x}, !Sub s is
// {"Fn::Sub": s}) without resolving them (NoProcess). Its answer is JSON:
// a whole number becomes an int again, as YAML decodes it, and the string
// of !GetAtt X.Attr becomes the list [X, Attr], as CloudFormation reads it.
func parseYAML(b []byte) (any, error) {
	parseMu.Lock()
	j, err := intrinsics.ProcessYAML(b, &intrinsics.ProcessorOptions{NoProcess: true})
	parseMu.Unlock()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return plain(v), nil
}

// plain returns v with its JSON numbers as ints (or float64s) and each
// Fn::GetAtt of a string as a list.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plain(e)
		}
		if g, ok := x["Fn::GetAtt"].(string); ok && len(x) == 1 {
			id, attr, _ := strings.Cut(g, ".")
			x["Fn::GetAtt"] = []any{id, attr}
		}
	case []any:
		for i, e := range x {
			x[i] = plain(e)
		}
	case json.Number:
		if n, err := strconv.Atoi(string(x)); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
