package samtemplate

// The template's YAML decoded into plain values (maps, slices, strings and
// numbers, with the CloudFormation short forms turned into their long
// forms), and the helpers that read them.

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
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

// decode turns a YAML node into plain Go values, expanding the short form of
// an intrinsic (!Ref x) into its long form ({"Ref": x}).
func decode(n *yaml.Node) any {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return decode(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = decode(n.Content[i+1])
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			s = append(s, decode(c))
		}
		v = s
	case yaml.AliasNode:
		return decode(n.Alias)
	default:
		var x any
		if err := n.Decode(&x); err != nil {
			x = n.Value
		}
		if n.Tag != "" && strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			x = n.Value
		}
		v = x
	}
	switch tag := n.Tag; {
	case tag == "!Ref":
		return map[string]any{"Ref": v}
	case tag == "!GetAtt":
		if s, ok := v.(string); ok {
			id, attr, _ := strings.Cut(s, ".")
			return map[string]any{"Fn::GetAtt": []any{id, attr}}
		}
		return map[string]any{"Fn::GetAtt": v}
	case strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!"):
		return map[string]any{"Fn::" + tag[1:]: v}
	}
	return v
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
