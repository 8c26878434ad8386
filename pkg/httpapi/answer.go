package httpapi

import (
	"bytes"
	"net/http"
)

// AnswerRecorder passes an answer through to the ResponseWriter it wraps,
// keeping its status and the first max bytes of its body, for a middleware
// that records what a route answered.
type AnswerRecorder struct {
	http.ResponseWriter
	max    int
	status int
	body   bytes.Buffer
}

// NewAnswerRecorder returns the recorder of w's answer, keeping up to max
// bytes of its body.
func NewAnswerRecorder(w http.ResponseWriter, max int) *AnswerRecorder {
	return &AnswerRecorder{ResponseWriter: w, max: max}
}

// Status returns the answer's status, 0 while nothing is written.
func (a *AnswerRecorder) Status() int { return a.status }

// Body returns the start of the answer's body (up to max bytes).
func (a *AnswerRecorder) Body() []byte { return a.body.Bytes() }

// WriteHeader writes the status, keeping the first.
func (a *AnswerRecorder) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
	a.ResponseWriter.WriteHeader(code)
}

// Write writes b, keeping it while there is room.
func (a *AnswerRecorder) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	if room := a.max - a.body.Len(); room > 0 {
		a.body.Write(b[:min(room, len(b))])
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the answer's writer.
func (a *AnswerRecorder) Unwrap() http.ResponseWriter { return a.ResponseWriter }
