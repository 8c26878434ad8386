package storetest

import (
	"bytes"
	"encoding/json"
)

// withoutAttributes returns an UpdateItem answer without names in its
// Attributes.
func withoutAttributes(out []byte, names []string) []byte {
	var resp map[string]json.RawMessage
	if json.Unmarshal(out, &resp) != nil || resp["Attributes"] == nil {
		return out
	}
	var attrs map[string]json.RawMessage
	if json.Unmarshal(resp["Attributes"], &attrs) != nil {
		return out
	}
	for _, n := range names {
		delete(attrs, n)
	}
	resp["Attributes"], _ = json.Marshal(attrs)
	b, _ := json.Marshal(resp)
	return b
}

// emptyMarker is the string element of a stored empty list and the key of
// a stored empty map (see dynamoShim).
const emptyMarker = "\x00storetest:empty"

// rewriteJSON returns body with f applied to every value, leaves first;
// body itself when it is not JSON.
func rewriteJSON(body []byte, f func(any) any) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	out, err := json.Marshal(walk(v, f))
	if err != nil {
		return body
	}
	return out
}

func walk(v any, f func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = walk(e, f)
		}
	case []any:
		for i, e := range x {
			x[i] = walk(e, f)
		}
	}
	return f(v)
}

// markEmpty turns an empty list {"L":[]} or map {"M":{}} into one holding
// emptyMarker.
func markEmpty(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	if l, ok := m["L"].([]any); ok && len(l) == 0 {
		return map[string]any{"L": []any{map[string]any{"S": emptyMarker}}}
	}
	if mm, ok := m["M"].(map[string]any); ok && len(mm) == 0 {
		return map[string]any{"M": map[string]any{emptyMarker: map[string]any{"NULL": true}}}
	}
	return v
}

// unmarkEmpty takes emptyMarker out of a list or a map.
func unmarkEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, emptyMarker)
		if l, ok := x["L"].([]any); ok && len(x) == 1 {
			kept := []any{}
			for _, e := range l {
				if m, ok := e.(map[string]any); !ok || len(m) != 1 || m["S"] != emptyMarker {
					kept = append(kept, e)
				}
			}
			x["L"] = kept
		}
		if m, ok := x["M"].(map[string]any); ok && len(x) == 1 && len(m) == 0 {
			x["M"] = map[string]any{}
		}
	}
	return v
}
