package storetest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// read makes a Query or Scan with a FilterExpression as DynamoDB does: the
// page is read without the filter (its Limit counts the items read), then
// each of its items is checked against the filter on its own, a copy of it
// in the scratch table deleted on the filter as condition.
func (s *dynamoShim) read(op string, body []byte) (int, []byte) {
	var req map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&req) != nil || req["FilterExpression"] == nil {
		return s.call(op, body)
	}
	filter, _ := req["FilterExpression"].(string)
	if req["Limit"] == nil && !strings.Contains(filter, "begins_with") {
		return s.call(op, body) // minidyn reads it as DynamoDB does
	}
	table, _ := req["TableName"].(string)
	sel, _ := req["Select"].(string)
	proj, _ := req["ProjectionExpression"].(string)
	names, _ := req["ExpressionAttributeNames"].(map[string]any)
	values, _ := req["ExpressionAttributeValues"].(map[string]any)
	page := map[string]any{}
	for k, v := range req {
		page[k] = v
	}
	delete(page, "FilterExpression")
	delete(page, "ProjectionExpression")
	delete(page, "Select")
	keepUsed(page)
	pb, _ := json.Marshal(page)
	code, out := s.call(op, pb)
	var got struct {
		Items            []item
		LastEvaluatedKey json.RawMessage
	}
	if code != http.StatusOK || json.Unmarshal(out, &got) != nil {
		return code, out
	}
	items := []item{}
	for _, it := range got.Items {
		if s.matches(table, it, filter, names, values) {
			items = append(items, project(it, proj, names))
		}
	}
	resp := map[string]any{"Items": items, "Count": len(items), "ScannedCount": len(got.Items)}
	if sel == "COUNT" {
		delete(resp, "Items")
	}
	if len(got.LastEvaluatedKey) > 0 && string(got.LastEvaluatedKey) != "null" {
		resp["LastEvaluatedKey"] = got.LastEvaluatedKey
	}
	b, _ := json.Marshal(resp)
	return code, b
}

// beginsWith is a begins_with call of an expression and its path.
var beginsWith = regexp.MustCompile(`begins_with\(\s*([^,\s)]+)\s*,[^)]*\)`)

// matches reports whether it passes filter: a copy of it in table's scratch
// table is deleted on filter as condition. A begins_with of an attribute
// it does not have is false in DynamoDB; minidyn refuses it, so it becomes
// attribute_exists of the attribute (false too).
func (s *dynamoShim) matches(table string, it item, filter string, names, values map[string]any) bool {
	cond := beginsWith.ReplaceAllStringFunc(filter, func(call string) string {
		path := beginsWith.FindStringSubmatch(call)[1]
		attr := path
		if n, ok := names[path].(string); ok {
			attr = n
		}
		if _, ok := it[attr]; ok || strings.ContainsAny(path, ".[") {
			return call
		}
		return "attribute_exists(" + path + ")"
	})
	key := item{}
	for _, k := range s.keys[table] {
		key[k] = it[k]
	}
	s.put(scratch(table), it)
	del := map[string]any{"TableName": scratch(table), "Key": key, "ConditionExpression": cond,
		"ExpressionAttributeNames": names, "ExpressionAttributeValues": values}
	keepUsedBy(del, "ConditionExpression")
	b, _ := json.Marshal(del)
	code, _ := s.call("DeleteItem", b)
	s.delete(scratch(table), key)
	return code == http.StatusOK
}

// keepUsed takes out of a read's ExpressionAttributeNames and
// ExpressionAttributeValues those its expressions no longer use (DynamoDB
// refuses them).
func keepUsed(req map[string]any) {
	keepUsedBy(req, "KeyConditionExpression", "FilterExpression", "ProjectionExpression")
}

// keepUsedBy takes out of req's ExpressionAttributeNames and
// ExpressionAttributeValues those its expressions named do not use.
func keepUsedBy(req map[string]any, expressions ...string) {
	var exprs string
	for _, e := range expressions {
		if v, ok := req[e].(string); ok {
			exprs += v + " "
		}
	}
	for _, attr := range []string{"ExpressionAttributeNames", "ExpressionAttributeValues"} {
		m, _ := req[attr].(map[string]any)
		used := map[string]any{}
		for k, v := range m {
			if regexp.MustCompile(regexp.QuoteMeta(k) + `\b`).MatchString(exprs) {
				used[k] = v
			}
		}
		if len(used) == 0 {
			delete(req, attr)
		} else {
			req[attr] = used
		}
	}
}

// project returns the top-level attributes of it that projection names
// (it itself when projection is empty); nested paths are not projected.
func project(it item, projection string, names map[string]any) item {
	if projection == "" {
		return it
	}
	out := item{}
	for p := range strings.SplitSeq(projection, ",") {
		p = strings.TrimSpace(p)
		if n, ok := names[p].(string); ok {
			p = n
		}
		if v, ok := it[p]; ok {
			out[p] = v
		}
	}
	return out
}
