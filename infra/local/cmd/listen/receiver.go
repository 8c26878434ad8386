package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"payments/pkg/webhooks"
)

// Limits of the receiver.
const (
	// maxBody caps a delivery's body (the service's are a few KiB).
	maxBody = 1 << 20
	// tolerance is how old a signature's timestamp may be: 300 s, as
	// docs/webhooks.md suggests to receivers.
	tolerance = 5 * time.Minute
	// forwardTimeout bounds a forward, well within the 10 s the webhook
	// worker waits for an answer.
	forwardTimeout = 5 * time.Second
)

// receiver prints each request it gets as a webhook delivery, verified
// with the company's signing secret, forwards it when told to, and
// answers 200.
type receiver struct {
	// secret is the signing secret deliveries are verified with; empty
	// when unknown.
	secret string
	// forward is the URL each request is also sent to; empty for none.
	forward string
	client  *http.Client
	out     io.Writer
	now     func() time.Time

	mu sync.Mutex // one delivery's lines at a time on out
}

// newReceiver returns a receiver that prints to out.
func newReceiver(secret, forward string, out io.Writer) *receiver {
	return &receiver{
		secret:  secret,
		forward: forward,
		client: &http.Client{
			Timeout: forwardTimeout,
			// The forward's answer is reported as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		out: out,
		now: time.Now,
	}
}

// ServeHTTP prints the request as a delivery: the event type, the event id
// and whether its signature verifies; its signature header and its body as
// they came, each on a line of its own and unindented, for a check of one's
// own (the README's openssl recipe); its JSON body indented; then the
// forward's result.
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := rc.now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		rc.printf("%s %s %s: the body could not be read: %v\n", at.Format(time.TimeOnly), r.Method, r.URL.Path, err)
		http.Error(w, "the body could not be read", http.StatusBadRequest)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s  event %s  %s\n", at.Format(time.TimeOnly), eventType(r.Header, body), orNone(r.Header.Get(webhooks.EventIDHeader)), rc.verify(r.Header, body, at))
	fmt.Fprintf(&b, "%s: %s\n", webhooks.SignatureHeader, orNone(r.Header.Get(webhooks.SignatureHeader)))
	if len(body) > 0 {
		b.Write(body)
		b.WriteString("\n")
	}
	b.WriteString(pretty(body))
	if rc.forward != "" {
		fmt.Fprintf(&b, "  %s\n", rc.forwardRequest(r, body))
	}
	rc.printf("%s\n", b.String()) // and a blank line between deliveries
	w.WriteHeader(http.StatusOK)
}

// verify says whether the signature of a delivery verifies with the
// secret, with webhooks.Verify, and why not.
func (rc *receiver) verify(h http.Header, body []byte, now time.Time) string {
	sig := h.Get(webhooks.SignatureHeader)
	switch {
	case rc.secret == "":
		return "NOT verified (no secret to verify with: give COMPANY= or SECRET=)"
	case sig == "":
		return "NOT verified (no " + webhooks.SignatureHeader + " header: the company has no signing secret)"
	}
	err := webhooks.Verify(sig, body, rc.secret, tolerance, now)
	switch {
	case err == nil:
		return "verified"
	case err == webhooks.ErrBadSignature:
		return "NOT verified (the signature does not match this body with this secret: another secret, or a changed body)"
	case errors.Is(err, webhooks.ErrBadSignature):
		return "NOT verified (" + strings.TrimPrefix(err.Error(), "webhooks: ") + ")"
	default:
		return "NOT verified (" + err.Error() + ")"
	}
}

// hopHeaders are not passed on by a forward: they describe one connection.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forwardRequest sends r, with body, to the forward URL as it came:
// method, headers (but those of the connection) and the body's bytes; it
// returns a line that tells how that went.
func (rc *receiver) forwardRequest(r *http.Request, body []byte) string {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, rc.forward, bytes.NewReader(body))
	if err != nil {
		return fmt.Sprintf("forward to %s: %v", rc.forward, err)
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	resp, err := rc.client.Do(req)
	if err != nil {
		return fmt.Sprintf("forward to %s failed: %v", rc.forward, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return fmt.Sprintf("forwarded to %s: %s", rc.forward, resp.Status)
}

func (rc *receiver) printf(format string, args ...any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fmt.Fprintf(rc.out, format, args...)
}

// eventType returns the X-Service-Event-Type header, else the body's
// "event".
func eventType(h http.Header, body []byte) string {
	if t := h.Get(webhooks.EventTypeHeader); t != "" {
		return t
	}
	var b struct {
		Event string `json:"event"`
	}
	json.Unmarshal(body, &b)
	return orNone(b.Event)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// pretty returns body indented when it is JSON, ending with a newline; it
// says when there is no body, or when it is not JSON.
func pretty(body []byte) string {
	if len(body) == 0 {
		return "(no body)\n"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return "(not JSON)\n"
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
