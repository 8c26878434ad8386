// Package runtimeapi emulates the AWS Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html), so that
// a function's real bootstrap binary, built with -tags lambda.norpc, can be
// run and invoked locally: start the binary with AWS_LAMBDA_RUNTIME_API set
// to the server's address and call Invoke.
//
// It serves:
//
//	GET  /2018-06-01/runtime/invocation/next
//	POST /2018-06-01/runtime/invocation/{id}/response
//	POST /2018-06-01/runtime/invocation/{id}/error
//	POST /2018-06-01/runtime/init/error
package runtimeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
)

// The headers of a next-invocation response.
const (
	HeaderRequestID   = "Lambda-Runtime-Aws-Request-Id"
	HeaderDeadlineMs  = "Lambda-Runtime-Deadline-Ms"
	HeaderFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	HeaderTraceID     = "Lambda-Runtime-Trace-Id"
	HeaderErrorType   = "Lambda-Runtime-Function-Error-Type"
)

// FunctionError is an error a function reported for an invocation or at
// init, with the body the runtime posted.
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
	// Init is true for an init error.
	Init bool `json:"-"`
}

func (e *FunctionError) Error() string {
	where := "invocation"
	if e.Init {
		where = "init"
	}
	return fmt.Sprintf("runtimeapi: function %s error: %s: %s", where, e.Type, e.Message)
}

// ErrClosed reports an Invoke on a closed server.
var ErrClosed = errors.New("runtimeapi: server closed")

type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	result   chan result
}

type result struct {
	payload []byte
	err     error
}

// Server is the Runtime API of one function instance. Invocations are
// handed out one at a time, in order, to whoever asks for the next one.
type Server struct {
	// FunctionARN is sent with each invocation.
	FunctionARN string
	// Timeout is the function's timeout: the deadline of each invocation is
	// that far from when it is handed out (default 15 s).
	Timeout time.Duration

	queue   chan *invocation
	mu      sync.Mutex
	active  map[string]*invocation // handed out, awaiting a result
	initErr error
	failed  chan struct{} // closed on an init error
	waiting chan struct{} // closed at the first GET …/invocation/next
	waitOne sync.Once
	closed  chan struct{}
	once    sync.Once
	mux     *http.ServeMux
}

// New returns a Server for the function with the ARN functionARN.
func New(functionARN string) *Server {
	s := &Server{
		FunctionARN: functionARN,
		queue:       make(chan *invocation),
		active:      map[string]*invocation{},
		failed:      make(chan struct{}),
		waiting:     make(chan struct{}),
		closed:      make(chan struct{}),
		mux:         http.NewServeMux(),
	}
	const base = "/2018-06-01/runtime/"
	s.mux.HandleFunc("GET "+base+"invocation/next", s.next)
	s.mux.HandleFunc("POST "+base+"invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, "response") })
	s.mux.HandleFunc("POST "+base+"invocation/{id}/error", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, "error") })
	s.mux.HandleFunc("POST "+base+"init/error", s.initFailed)
	return s
}

// Invoke hands payload to the runtime and returns the response it posts. It
// fails with a *FunctionError when the function reports an error (or has
// reported an init error), and with ctx's error when ctx ends first.
func (s *Server) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	inv := &invocation{id: uuid.NewString(), payload: payload, result: make(chan result, 1)}
	select {
	case s.queue <- inv:
	case <-s.failed:
		return nil, s.initError()
	case <-s.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-inv.result:
		return r.payload, r.err
	case <-s.failed:
		return nil, s.initError()
	case <-s.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Waiting is closed when the function first asks for an invocation (GET
// …/invocation/next): its init is over. make coldstart times exec to it.
func (s *Server) Waiting() <-chan struct{} { return s.waiting }

// InitError returns the error the runtime reported at init, or nil.
func (s *Server) InitError() error {
	select {
	case <-s.failed:
		return s.initError()
	default:
		return nil
	}
}

func (s *Server) initError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initErr
}

// Close fails pending and future invocations with ErrClosed and releases a
// runtime waiting for the next invocation. It does not stop the HTTP
// listener, which belongs to the caller.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// next blocks until an invocation is available and hands it out.
func (s *Server) next(w http.ResponseWriter, r *http.Request) {
	s.waitOne.Do(func() { close(s.waiting) })
	var inv *invocation
	select {
	case inv = <-s.queue:
	case <-s.closed:
		writeError(w, http.StatusGone, "Closed", "the runtime API is closed")
		return
	case <-r.Context().Done():
		return
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	inv.deadline = time.Now().Add(timeout)
	s.mu.Lock()
	s.active[inv.id] = inv
	s.mu.Unlock()
	h := w.Header()
	h.Set(HeaderRequestID, inv.id)
	h.Set(HeaderDeadlineMs, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set(HeaderFunctionARN, s.FunctionARN)
	h.Set(HeaderTraceID, "Root=1-"+strconv.FormatInt(time.Now().Unix(), 16)+"-"+uuid.NewString()[:24]+";Sampled=0")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(inv.payload)
}

// complete records the response or error of invocation id.
func (s *Server) complete(w http.ResponseWriter, r *http.Request, kind string) {
	id := r.PathValue("id")
	body, err := io.ReadAll(io.LimitReader(r.Body, 6<<20+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "InvalidRequest", "unreadable body")
		return
	}
	if len(body) > 6<<20 {
		writeError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "the response exceeds 6 MB")
		return
	}
	s.mu.Lock()
	inv, ok := s.active[id]
	delete(s.active, id)
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation in progress with that id")
		return
	}
	res := result{payload: body}
	if kind == "error" {
		fe := &FunctionError{Type: r.Header.Get(HeaderErrorType)}
		json.Unmarshal(body, fe)
		res = result{err: fe}
	}
	inv.result <- res
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

// initFailed records an init error: every invocation fails with it.
func (s *Server) initFailed(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	fe := &FunctionError{Type: r.Header.Get(HeaderErrorType), Init: true}
	json.Unmarshal(body, fe)
	s.mu.Lock()
	first := s.initErr == nil
	if first {
		s.initErr = fe
	}
	s.mu.Unlock()
	if first {
		close(s.failed)
	}
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, `{"status":"OK"}`)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(FunctionError{Type: typ, Message: msg})
}
