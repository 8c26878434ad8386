package storetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// dynamoShim stands in front of minidyn's server and makes up for where it
// falls short of what the store asks of DynamoDB:
//
//   - DescribeTable gives the table's TableStatus, ACTIVE (the
//     table-exists waiter of store.DB.CreateTable waits for it; minidyn's
//     tables are usable once created but their description has no status);
//   - UpdateTimeToLive is answered (minidyn keeps no TTL: an item past its
//     expiry stays, as it may in DynamoDB until its sweep);
//   - the secondary indexes follow the items: minidyn keeps them right
//     only when an item is put where there was none, or deleted. So every
//     write (PutItem, UpdateItem, DeleteItem, TransactWriteItems,
//     BatchWriteItem) is made on a scratch table without indexes, holding
//     a copy of the items it touches; when it succeeds, each touched item
//     is deleted from the table and put back as the scratch table has it;
//   - an update's REMOVE clause removes the attributes it names: minidyn
//     evaluates it but leaves them on the item, so the shim takes them
//     off the scratch copy, and out of the update's returned values;
//   - a cancelled transaction gives the reason of each of its items whose
//     condition fails, as DynamoDB does (minidyn gives the first only):
//     each condition is checked alone on the scratch copies;
//   - a Query's or Scan's Limit counts the items read, before its
//     FilterExpression (minidyn counts those that pass it), and a
//     begins_with of a missing attribute is false (minidyn refuses it):
//     such a read is made without the filter, then each item of the page
//     is checked against it on its own (dynamoShim.matches);
//   - an empty list or map keeps its type: minidyn stores one but answers
//     it as {} (no type), so the shim stores each with a marker element
//     (emptyMarker) and takes the markers out of every answer. Inside
//     minidyn such a list has one element more (size() would see it; the
//     store does not use it).
//
// The shim serves one request at a time, so that each write and its
// copies are one step to every other request (minidyn itself runs one
// operation at a time).
type dynamoShim struct {
	mu   sync.Mutex
	next http.Handler
	keys map[string][]string // a table's key attributes, from its CreateTable
}

const dynamoTarget = "DynamoDB_20120810."

// wireUpdate is the part of an UpdateItem request, or of a transaction's
// Update, the shim reads.
type wireUpdate struct {
	TableName                string
	Key                      map[string]json.RawMessage
	UpdateExpression         string
	ExpressionAttributeNames map[string]string
}

// item is an item or a key as the wire has it.
type item = map[string]json.RawMessage

// scratch names the scratch table of table.
func scratch(table string) string { return table + "-scratch" }

func (s *dynamoShim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), dynamoTarget)
	body = rewriteJSON(body, markEmpty)
	var code int
	var out []byte
	switch op {
	case "UpdateTimeToLive":
		var in struct{ TimeToLiveSpecification json.RawMessage }
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		code = http.StatusOK
		out, _ = json.Marshal(in)
	case "DescribeTable":
		code, out = s.call(op, body)
		var desc map[string]map[string]any
		if code == http.StatusOK && json.Unmarshal(out, &desc) == nil && desc["Table"] != nil {
			desc["Table"]["TableStatus"] = "ACTIVE"
			out, _ = json.Marshal(desc)
		}
	case "CreateTable":
		code, out = s.createTable(body)
	case "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems":
		code, out = s.write(op, body)
	case "BatchWriteItem":
		code, out = s.batchWrite(body)
	case "Query", "Scan":
		code, out = s.read(op, body)
	default:
		code, out = s.call(op, body)
	}
	writeJSON(w, code, rewriteJSON(out, unmarkEmpty))
}

// createTable creates the table and its scratch table.
func (s *dynamoShim) createTable(body []byte) (int, []byte) {
	code, out := s.call("CreateTable", body)
	if code != http.StatusOK {
		return code, out
	}
	var in map[string]any
	json.Unmarshal(body, &in)
	var def struct {
		TableName string
		KeySchema []struct{ AttributeName string }
	}
	json.Unmarshal(body, &def)
	var keys []string
	for _, k := range def.KeySchema {
		keys = append(keys, k.AttributeName)
	}
	if s.keys == nil {
		s.keys = map[string][]string{}
	}
	s.keys[def.TableName] = keys
	in["TableName"] = scratch(def.TableName)
	delete(in, "GlobalSecondaryIndexes")
	delete(in, "LocalSecondaryIndexes")
	sc, _ := json.Marshal(in)
	if c, o := s.call("CreateTable", sc); c != http.StatusOK {
		return c, o
	}
	return code, out
}

// target is an item a write touches.
type target struct {
	table string
	key   item
}

// write makes a PutItem, UpdateItem, DeleteItem or TransactWriteItems on
// the scratch copies of the items it touches and, when it succeeds, puts
// the results in the tables.
func (s *dynamoShim) write(op string, body []byte) (int, []byte) {
	var req map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&req) != nil {
		return s.call(op, body)
	}
	var targets []target
	var removals []wireUpdate
	// retarget points one request (or transaction element) at the scratch
	// table and notes what it touches.
	retarget := func(kind string, m map[string]any) {
		raw, _ := json.Marshal(m)
		var u wireUpdate
		json.Unmarshal(raw, &u)
		var it struct{ Item item }
		json.Unmarshal(raw, &it)
		key := u.Key
		if kind == "Put" {
			key = item{}
			for _, k := range s.keys[u.TableName] {
				key[k] = it.Item[k]
			}
		}
		targets = append(targets, target{u.TableName, key})
		u.TableName = scratch(u.TableName)
		m["TableName"] = u.TableName
		if kind == "Update" && len(removed(u)) > 0 {
			removals = append(removals, u)
		}
	}
	if op == "TransactWriteItems" {
		items, _ := req["TransactItems"].([]any)
		for _, e := range items {
			for kind, v := range e.(map[string]any) {
				if m, ok := v.(map[string]any); ok {
					retarget(kind, m)
				}
			}
		}
	} else {
		retarget(strings.TrimSuffix(op, "Item"), req)
	}
	for _, t := range targets {
		s.copyItem(t.table, scratch(t.table), t.key)
	}
	scratchBody, _ := json.Marshal(req)
	code, out := s.call(op, scratchBody)
	if op == "TransactWriteItems" && code != http.StatusOK {
		out = s.everyReason(req, out)
	}
	if code == http.StatusOK {
		for _, u := range removals {
			s.remove(u)
		}
		if op == "UpdateItem" && len(removals) == 1 {
			out = withoutAttributes(out, removed(removals[0]))
		}
		for _, t := range targets {
			s.copyItem(scratch(t.table), t.table, t.key)
		}
	}
	for _, t := range targets {
		s.delete(scratch(t.table), t.key)
	}
	return code, out
}

// everyReason returns the cancellation of transaction req (on the scratch
// tables) with the reason ConditionalCheckFailed for each of its items
// whose condition fails on its own, out as it is when it is not a
// cancellation on a condition.
func (s *dynamoShim) everyReason(req map[string]any, out []byte) []byte {
	var cancel map[string]any
	if json.Unmarshal(out, &cancel) != nil || cancel["__type"] != "TransactionCanceledException" {
		return out
	}
	reasons, _ := cancel["CancellationReasons"].([]any)
	items, _ := req["TransactItems"].([]any)
	if len(reasons) != len(items) {
		return out
	}
	for i, e := range items {
		if r, _ := reasons[i].(map[string]any); r["Code"] != "None" && r["Code"] != "ConditionalCheckFailed" {
			return out // another cause: minidyn's answer stands
		}
		for kind, v := range e.(map[string]any) {
			m, _ := v.(map[string]any)
			if m == nil || m["ConditionExpression"] == nil {
				reasons[i] = map[string]any{"Code": "None"}
				continue
			}
			check := map[string]any{}
			for _, k := range []string{"TableName", "Key", "ConditionExpression", "ExpressionAttributeNames",
				"ExpressionAttributeValues", "ReturnValuesOnConditionCheckFailure"} {
				if v, ok := m[k]; ok {
					check[k] = v
				}
			}
			if kind == "Put" {
				var t struct{ TableName string }
				raw, _ := json.Marshal(m)
				json.Unmarshal(raw, &t)
				it, _ := m["Item"].(map[string]any)
				key := map[string]any{}
				for _, k := range s.keys[strings.TrimSuffix(t.TableName, "-scratch")] {
					key[k] = it[k]
				}
				check["Key"] = key
			}
			keepUsedBy(check, "ConditionExpression")
			b, _ := json.Marshal(map[string]any{"TransactItems": []any{map[string]any{"ConditionCheck": check}}})
			code, got := s.call("TransactWriteItems", b)
			var one struct{ CancellationReasons []any }
			if code != http.StatusOK && json.Unmarshal(got, &one) == nil && len(one.CancellationReasons) == 1 {
				reasons[i] = one.CancellationReasons[0]
			} else {
				reasons[i] = map[string]any{"Code": "None"}
			}
		}
	}
	b, err := json.Marshal(cancel)
	if err != nil {
		return out
	}
	return b
}

// batchWrite makes a BatchWriteItem's puts and deletes one at a time.
func (s *dynamoShim) batchWrite(body []byte) (int, []byte) {
	var in struct {
		RequestItems map[string][]struct {
			PutRequest    *struct{ Item item }
			DeleteRequest *struct{ Key item }
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return s.call("BatchWriteItem", body)
	}
	for table, reqs := range in.RequestItems {
		for _, r := range reqs {
			switch {
			case r.PutRequest != nil:
				key := item{}
				for _, k := range s.keys[table] {
					key[k] = r.PutRequest.Item[k]
				}
				s.delete(table, key)
				s.put(table, r.PutRequest.Item)
			case r.DeleteRequest != nil:
				s.delete(table, r.DeleteRequest.Key)
			}
		}
	}
	return http.StatusOK, []byte(`{"UnprocessedItems":{}}`)
}

// copyItem makes the item of key in table to what it is in from (deleted
// when there is none there): deleted, then put.
func (s *dynamoShim) copyItem(from, to string, key item) {
	it := s.get(from, key)
	s.delete(to, key)
	if it != nil {
		s.put(to, it)
	}
}

func (s *dynamoShim) get(table string, key item) item {
	b, _ := json.Marshal(map[string]any{"TableName": table, "Key": key, "ConsistentRead": true})
	code, out := s.call("GetItem", b)
	var got struct{ Item item }
	if code != http.StatusOK || json.Unmarshal(out, &got) != nil {
		return nil
	}
	return got.Item
}

func (s *dynamoShim) put(table string, it item) {
	b, _ := json.Marshal(map[string]any{"TableName": table, "Item": it})
	s.call("PutItem", b)
}

func (s *dynamoShim) delete(table string, key item) {
	b, _ := json.Marshal(map[string]any{"TableName": table, "Key": key})
	s.call("DeleteItem", b)
}

// call sends one request to minidyn and returns its status and body.
func (s *dynamoShim) call(op string, body []byte) (int, []byte) {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", dynamoTarget+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	rec := httptest.NewRecorder()
	s.next.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// remove takes the attributes u's REMOVE clause names off its item.
func (s *dynamoShim) remove(u wireUpdate) {
	it := s.get(u.TableName, u.Key)
	if it == nil {
		return
	}
	for _, name := range removed(u) {
		delete(it, name)
	}
	s.put(u.TableName, it)
}

// removeClause is an update expression's REMOVE clause: the text up to the
// next clause or the end.
var removeClause = regexp.MustCompile(`(?i)\bREMOVE\s+(.*?)\s*(?:\b(?:SET|ADD|DELETE)\s|$)`)

// removed returns the top-level attribute names u's REMOVE clause names,
// placeholders resolved; nested paths (a.b, l[0]) are left to minidyn.
func removed(u wireUpdate) []string {
	m := removeClause.FindStringSubmatch(u.UpdateExpression)
	if m == nil {
		return nil
	}
	var names []string
	for p := range strings.SplitSeq(m[1], ",") {
		p = strings.TrimSpace(p)
		if p == "" || strings.ContainsAny(p, ".[") {
			continue
		}
		if n, ok := u.ExpressionAttributeNames[p]; ok {
			p = n
		}
		names = append(names, p)
	}
	return names
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(code)
	w.Write(body)
}
