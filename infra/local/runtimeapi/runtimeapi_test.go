package runtimeapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runtime is a minimal runtime client: it takes the next invocation and
// answers it with answer's result.
func runtime(t *testing.T, base string, answer func(id string, payload []byte, h http.Header) (kind, body string)) {
	t.Helper()
	resp, err := http.Get(base + "/2018-06-01/runtime/invocation/next")
	if err != nil {
		t.Error(err)
		return
	}
	payload, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("next: status %d", resp.StatusCode)
		return
	}
	id := resp.Header.Get(HeaderRequestID)
	kind, body := answer(id, payload, resp.Header)
	req, _ := http.NewRequest("POST", base+"/2018-06-01/runtime/invocation/"+id+"/"+kind, strings.NewReader(body))
	if kind == "error" {
		req.Header.Set(HeaderErrorType, "Runtime.Test")
	}
	post, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	post.Body.Close()
	if post.StatusCode != http.StatusAccepted {
		t.Errorf("%s: status %d", kind, post.StatusCode)
	}
}

func TestInvoke(t *testing.T) {
	tests := []struct {
		name     string
		kind     string
		body     string
		wantResp string
		wantErr  string
	}{
		{"response", "response", `{"statusCode":200}`, `{"statusCode":200}`, ""},
		{"error", "error", `{"errorMessage":"boom","errorType":"errorString"}`, "", "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New("arn:aws:lambda:us-east-1:123456789012:function:test")
			s.Timeout = 3 * time.Second
			srv := httptest.NewServer(s)
			defer srv.Close()
			defer s.Close()
			go runtime(t, srv.URL, func(id string, payload []byte, h http.Header) (string, string) {
				if string(payload) != `{"in":1}` {
					t.Errorf("payload %s", payload)
				}
				if h.Get(HeaderFunctionARN) != s.FunctionARN || h.Get(HeaderTraceID) == "" || id == "" {
					t.Errorf("headers %v", h)
				}
				ms, err := strconv.ParseInt(h.Get(HeaderDeadlineMs), 10, 64)
				if left := time.Until(time.UnixMilli(ms)); err != nil || left <= 0 || left > 3*time.Second {
					t.Errorf("deadline %q is not within the timeout", h.Get(HeaderDeadlineMs))
				}
				return tt.kind, tt.body
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := s.Invoke(ctx, []byte(`{"in":1}`))
			if tt.wantErr != "" {
				var fe *FunctionError
				if !errors.As(err, &fe) || fe.Message != tt.wantErr || fe.Type != "errorString" {
					t.Fatalf("err = %v, want a function error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(resp) != tt.wantResp {
				t.Fatalf("got %s, %v; want %s", resp, err, tt.wantResp)
			}
		})
	}
}

func TestInitError(t *testing.T) {
	s := New("arn")
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/2018-06-01/runtime/init/error", "application/json", strings.NewReader(`{"errorMessage":"no config","errorType":"Runtime.ExitError"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, err = s.Invoke(context.Background(), []byte("{}"))
	var fe *FunctionError
	if !errors.As(err, &fe) || !fe.Init || fe.Message != "no config" {
		t.Fatalf("err = %v, want the init error", err)
	}
	if s.InitError() == nil {
		t.Error("InitError() = nil")
	}
}

func TestBadRequests(t *testing.T) {
	s := New("arn")
	srv := httptest.NewServer(s)
	defer srv.Close()
	tests := []struct {
		method, path string
		want         int
	}{
		{"POST", "/2018-06-01/runtime/invocation/unknown/response", http.StatusBadRequest},
		{"POST", "/2018-06-01/runtime/invocation/unknown/error", http.StatusBadRequest},
		{"POST", "/2018-06-01/runtime/invocation/next", http.StatusMethodNotAllowed},
		{"GET", "/2018-06-01/other", http.StatusNotFound},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
	}
}

func TestInvokeContextAndClose(t *testing.T) {
	s := New("arn")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Invoke(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no runtime: err = %v, want the context's", err)
	}
	s.Close()
	if _, err := s.Invoke(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: err = %v, want ErrClosed", err)
	}
}
