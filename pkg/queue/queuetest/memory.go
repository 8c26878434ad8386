package queuetest

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySQS is this process's in-memory SQS (MemorySQS).
var memorySQS sync.Once

// MemorySQS starts, on first call, an in-memory SQS in this test process
// and points AWS_ENDPOINT_URL_SQS at it for the rest of the process. In a
// `go test -short` run (make test-unit) Client calls it, so that the
// functions and the tests send and receive through it unchanged; without
// -short (make test) the variable names the SQS emulator.
//
// It speaks the AWS JSON protocol of the operations the service and its
// tests use — CreateQueue, DeleteQueue, GetQueueUrl, ListQueues,
// GetQueueAttributes, SendMessage(Batch), ReceiveMessage (long polling
// included), DeleteMessage(Batch), ChangeMessageVisibility and PurgeQueue —
// with SQS's visibility timeouts, delays, receive counts and redrive to a
// dead-letter queue after maxReceiveCount receives. Messages are delivered
// oldest first, each to one receiver at a time.
func MemorySQS() {
	memorySQS.Do(func() {
		s := &sqsServer{queues: map[string]*memQueue{}, changed: make(chan struct{})}
		srv := httptest.NewServer(s)
		s.base = srv.URL
		os.Setenv("AWS_ENDPOINT_URL_SQS", srv.URL)
	})
}

// sqsAccount is the account id of the in-memory SQS's queue URLs and ARNs.
const sqsAccount = "000000000000"

type sqsServer struct {
	base    string
	mu      sync.Mutex
	queues  map[string]*memQueue // by name
	changed chan struct{}        // closed and replaced when a message may have become receivable
}

type memQueue struct {
	name  string
	attrs map[string]string
	msgs  []*memMessage // in the order sent
}

type memMessage struct {
	id, body     string
	attrs        json.RawMessage // MessageAttributes as sent
	trace        string          // the AWSTraceHeader system attribute
	sent         time.Time
	visible      time.Time // receivable from then on
	firstReceive time.Time
	receives     int
	handles      []string // the receipt handles of its receives, latest last
	received     bool
}

// sqsError is an error answer of the JSON protocol.
type sqsError struct {
	status int
	code   string // as the SDK's error types name it: QueueDoesNotExist …
	msg    string
}

func (e *sqsError) Error() string { return e.code + ": " + e.msg }

func notFound(url string) error {
	return &sqsError{http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist: " + url}
}

func invalid(format string, args ...any) error {
	return &sqsError{http.StatusBadRequest, "InvalidParameterValue", fmt.Sprintf(format, args...)}
}

func (s *sqsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	var in map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		s.answer(w, nil, invalid("request body: %v", err))
		return
	}
	var out any
	var err error
	switch op {
	case "ReceiveMessage":
		out, err = s.receive(r, in)
	default:
		s.mu.Lock()
		out, err = s.serve(op, in)
		s.mu.Unlock()
	}
	s.answer(w, out, err)
}

func (s *sqsServer) answer(w http.ResponseWriter, out any, err error) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if err != nil {
		e, ok := err.(*sqsError)
		if !ok {
			e = &sqsError{http.StatusInternalServerError, "InternalError", err.Error()}
		}
		w.WriteHeader(e.status)
		json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + e.code, "message": e.msg})
		return
	}
	if out == nil {
		out = struct{}{}
	}
	json.NewEncoder(w).Encode(out)
}

// serve answers every operation but ReceiveMessage, s.mu held.
func (s *sqsServer) serve(op string, in map[string]json.RawMessage) (any, error) {
	str := func(k string) string { var v string; json.Unmarshal(in[k], &v); return v }
	switch op {
	case "CreateQueue":
		name := str("QueueName")
		var attrs map[string]string
		json.Unmarshal(in["Attributes"], &attrs)
		if name == "" {
			return nil, invalid("no QueueName")
		}
		if _, ok := s.queues[name]; !ok {
			q := &memQueue{name: name, attrs: map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "0",
				"MessageRetentionPeriod": "345600", "MaximumMessageSize": "262144", "ReceiveMessageWaitTimeSeconds": "0"}}
			for k, v := range attrs {
				q.attrs[k] = v
			}
			q.attrs["QueueArn"] = s.arn(name)
			s.queues[name] = q
		}
		return map[string]string{"QueueUrl": s.url(name)}, nil
	case "GetQueueUrl":
		if _, ok := s.queues[str("QueueName")]; !ok {
			return nil, notFound(str("QueueName"))
		}
		return map[string]string{"QueueUrl": s.url(str("QueueName"))}, nil
	case "ListQueues":
		urls := []string{}
		for name := range s.queues {
			if strings.HasPrefix(name, str("QueueNamePrefix")) {
				urls = append(urls, s.url(name))
			}
		}
		return map[string][]string{"QueueUrls": urls}, nil
	}
	q, err := s.queue(str("QueueUrl"))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	switch op {
	case "DeleteQueue":
		delete(s.queues, q.name)
		return nil, nil
	case "PurgeQueue":
		q.msgs = nil
		return nil, nil
	case "SetQueueAttributes":
		var attrs map[string]string
		json.Unmarshal(in["Attributes"], &attrs)
		for k, v := range attrs {
			q.attrs[k] = v
		}
		return nil, nil
	case "GetQueueAttributes":
		var names []string
		json.Unmarshal(in["AttributeNames"], &names)
		all := q.attributes(now)
		out := map[string]string{}
		for k, v := range all {
			for _, n := range names {
				if n == "All" || n == k {
					out[k] = v
				}
			}
		}
		return map[string]any{"Attributes": out}, nil
	case "SendMessage":
		var e sendEntry
		if err := json.Unmarshal(mustJSON(in), &e); err != nil {
			return nil, invalid("%v", err)
		}
		m, err := s.send(q, e, now)
		if err != nil {
			return nil, err
		}
		return map[string]string{"MessageId": m.id, "MD5OfMessageBody": md5Hex(m.body)}, nil
	case "SendMessageBatch":
		var batch struct{ Entries []sendEntry }
		json.Unmarshal(mustJSON(in), &batch)
		ok, failed := []map[string]string{}, []map[string]any{}
		for _, e := range batch.Entries {
			m, err := s.send(q, e, now)
			if err != nil {
				failed = append(failed, map[string]any{"Id": e.ID, "Code": err.(*sqsError).code, "Message": err.(*sqsError).msg, "SenderFault": true})
				continue
			}
			ok = append(ok, map[string]string{"Id": e.ID, "MessageId": m.id, "MD5OfMessageBody": md5Hex(m.body)})
		}
		return map[string]any{"Successful": ok, "Failed": failed}, nil
	case "DeleteMessage":
		// As SQS, a handle of an earlier receive deletes too, and one of a
		// message deleted already changes nothing.
		if i := q.byHandle(str("ReceiptHandle"), false); i >= 0 {
			q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
		}
		return nil, nil
	case "DeleteMessageBatch":
		var batch struct {
			Entries []struct{ Id, ReceiptHandle string }
		}
		json.Unmarshal(mustJSON(in), &batch)
		ok := []map[string]string{}
		for _, e := range batch.Entries {
			if i := q.byHandle(e.ReceiptHandle, false); i >= 0 {
				q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
			}
			ok = append(ok, map[string]string{"Id": e.Id})
		}
		return map[string]any{"Successful": ok, "Failed": []any{}}, nil
	case "ChangeMessageVisibility":
		var timeout int
		json.Unmarshal(in["VisibilityTimeout"], &timeout)
		i := q.byHandle(str("ReceiptHandle"), true)
		if i < 0 {
			return nil, &sqsError{http.StatusBadRequest, "ReceiptHandleIsInvalid", "The input receipt handle is invalid."}
		}
		if m := q.msgs[i]; !m.visible.After(now) {
			return nil, &sqsError{http.StatusBadRequest, "MessageNotInflight", "The message is not in flight."}
		}
		q.msgs[i].visible = now.Add(time.Duration(timeout) * time.Second)
		s.notify()
		return nil, nil
	}
	return nil, &sqsError{http.StatusBadRequest, "UnsupportedOperation", op + " is not supported by the in-memory SQS"}
}

// sendEntry is a message to send, as SendMessage and SendMessageBatch's
// entries have it.
type sendEntry struct {
	ID                      string `json:"Id"`
	MessageBody             string
	DelaySeconds            *int
	MessageAttributes       json.RawMessage
	MessageSystemAttributes map[string]struct{ StringValue string }
}

func (s *sqsServer) send(q *memQueue, e sendEntry, now time.Time) (*memMessage, error) {
	if e.MessageBody == "" {
		return nil, invalid("The request must contain the parameter MessageBody.")
	}
	delay, _ := strconv.Atoi(q.attrs["DelaySeconds"])
	if e.DelaySeconds != nil {
		delay = *e.DelaySeconds
	}
	if delay < 0 || delay > 900 {
		return nil, invalid("Value %d for parameter DelaySeconds is invalid.", delay)
	}
	m := &memMessage{id: randomID(), body: e.MessageBody, attrs: e.MessageAttributes, sent: now,
		visible: now.Add(time.Duration(delay) * time.Second), trace: e.MessageSystemAttributes["AWSTraceHeader"].StringValue}
	q.msgs = append(q.msgs, m)
	s.notify()
	return m, nil
}

// receive answers ReceiveMessage: it waits up to WaitTimeSeconds for a
// message to become receivable.
func (s *sqsServer) receive(r *http.Request, in map[string]json.RawMessage) (any, error) {
	var req struct {
		QueueUrl            string
		MaxNumberOfMessages int
		VisibilityTimeout   *int
		WaitTimeSeconds     *int
	}
	json.Unmarshal(mustJSON(in), &req)
	if req.MaxNumberOfMessages == 0 {
		req.MaxNumberOfMessages = 1
	}
	if req.MaxNumberOfMessages < 1 || req.MaxNumberOfMessages > 10 {
		return nil, invalid("Value %d for parameter MaxNumberOfMessages is invalid.", req.MaxNumberOfMessages)
	}
	s.mu.Lock()
	q, err := s.queue(req.QueueUrl)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	wait, _ := strconv.Atoi(q.attrs["ReceiveMessageWaitTimeSeconds"])
	if req.WaitTimeSeconds != nil {
		wait = *req.WaitTimeSeconds
	}
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		now := time.Now()
		msgs, next := s.take(q, req.MaxNumberOfMessages, req.VisibilityTimeout, now)
		if len(msgs) > 0 || !now.Before(deadline) {
			s.mu.Unlock()
			return map[string]any{"Messages": msgs}, nil
		}
		changed := s.changed
		s.mu.Unlock()
		until := deadline
		if !next.IsZero() && next.Before(until) {
			until = next
		}
		timer := time.NewTimer(time.Until(until))
		select {
		case <-changed:
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return nil, r.Context().Err()
		}
		timer.Stop()
		s.mu.Lock()
		if q, err = s.queue(req.QueueUrl); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
}

func (s *sqsServer) queue(url string) (*memQueue, error) {
	q, ok := s.queues[url[strings.LastIndex(url, "/")+1:]]
	if !ok {
		return nil, notFound(url)
	}
	return q, nil
}

func (s *sqsServer) url(name string) string { return s.base + "/" + sqsAccount + "/" + name }

func (s *sqsServer) arn(name string) string {
	return "arn:aws:sqs:us-east-1:" + sqsAccount + ":" + name
}

// notify wakes the receivers waiting for a message.
func (s *sqsServer) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func md5Hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
