package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/infra/local/localca"
	"payments/infra/local/localtest"
	"payments/infra/local/samples"
	"payments/pkg/outbound"
	"payments/pkg/webhooks"
)

// testCA is the local CA of this package's tests, which the process
// trusts through SSL_CERT_FILE as the functions of `make run` trust theirs.
var testCA *localca.CA

// TestMain makes testCA and points SSL_CERT_FILE at a bundle that holds
// it before any test verifies a certificate (Go reads the file once), and
// lets the webhook worker deliver to loopback, as `make run` does.
func TestMain(m *testing.M) { os.Exit(trustTestCA(m)) }

func trustTestCA(m *testing.M) int {
	ca, err := localca.New()
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "listen-test-ca-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	bundle := filepath.Join(dir, "bundle.pem")
	if err := samples.TrustBundle(ca.PEM, bundle); err != nil {
		panic(err)
	}
	os.Setenv("SSL_CERT_FILE", bundle)
	os.Setenv(outbound.AllowLoopbackEnv, "true")
	testCA = ca
	return m.Run()
}

const (
	testSecret = "7c1f0e5d2b8a4c6e9f3a1b0d5e7c2a4f6b8d0e1f3a5c7e9b2d4f6a8c0e2b4d6f"
	testBody   = `{"event":"payment.payout.status_updated","data":{"transaction_id":"t1","status":"PENDING"}}`
	testID     = "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60"
)

// delivery returns a request as the webhook worker sends one: body,
// signed at t with secret (unsigned when secret is empty).
func delivery(body, secret string, t time.Time) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(webhooks.EventIDHeader, testID)
	r.Header.Set(webhooks.EventTypeHeader, "payment.payout.status_updated")
	if secret != "" {
		r.Header.Set(webhooks.SignatureHeader, webhooks.Sign(secret, t, []byte(testBody)))
	}
	return r
}

// TestReceiverVerifies sends the receiver deliveries signed as the worker
// signs them: it prints each with its type, id and verdict, the body
// indented, and answers 200 whatever the verdict.
func TestReceiverVerifies(t *testing.T) {
	now := time.Now()
	other, _ := webhooks.NewSecret()
	tests := []struct {
		name   string
		secret string // the receiver's
		req    *http.Request
		want   string
	}{
		{"genuine", testSecret, delivery(testBody, testSecret, now), "  verified\n"},
		{"tampered", testSecret, delivery(strings.Replace(testBody, "PENDING", "SUCCESS", 1), testSecret, now),
			"  NOT verified (the signature does not match this body with this secret: another secret, or a changed body)\n"},
		{"wrong secret", testSecret, delivery(testBody, other, now),
			"  NOT verified (the signature does not match this body with this secret: another secret, or a changed body)\n"},
		{"stale", testSecret, delivery(testBody, testSecret, now.Add(-10*time.Minute)),
			"  NOT verified (signature does not verify: timestamp outside the tolerance)\n"},
		{"unsigned", testSecret, delivery(testBody, "", now), "  NOT verified (no X-Service-Signature header: the company has no signing secret)\n"},
		{"no secret", "", delivery(testBody, testSecret, now), "  NOT verified (no secret to verify with: give COMPANY= or SECRET=)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			rc := newReceiver(tt.secret, "", &out)
			rc.now = func() time.Time { return now }
			sent := bodyOf(tt.req)
			w := httptest.NewRecorder()
			rc.ServeHTTP(w, tt.req)
			if w.Code != http.StatusOK {
				t.Errorf("answered %d, want 200", w.Code)
			}
			lines := strings.SplitN(out.String(), "\n", 4)
			if len(lines) < 4 {
				t.Fatalf("printed:\n%s", out.String())
			}
			if want := now.Format(time.TimeOnly) + " payment.payout.status_updated  event " + testID + tt.want; lines[0]+"\n" != want {
				t.Errorf("first line\n%q, want\n%q", lines[0]+"\n", want)
			}
			if want := webhooks.SignatureHeader + ": " + orNone(tt.req.Header.Get(webhooks.SignatureHeader)); lines[1] != want {
				t.Errorf("second line %q, want the signature header as it came, %q", lines[1], want)
			}
			if lines[2] != sent {
				t.Errorf("third line %q, want the body as it came, %q", lines[2], sent)
			}
			if !strings.HasPrefix(lines[3], "{\n  \"event\": \"payment.payout.status_updated\",\n  \"data\": {\n    \"transaction_id\": \"t1\",") {
				t.Errorf("the body is not printed indented:\n%s", lines[3])
			}
		})
	}
}

// bodyOf returns the body of a request made by delivery, leaving it to be
// read again.
func bodyOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// TestReadmeRecipeChecksPrintedDelivery runs the README's openssl recipe
// ("Verifying a signature") on what the receiver prints of a delivery, as
// the README says to take it: the rest of the X-Service-Signature line as
// the header, the line under it, pasted into body.json, as the body. With
// the endpoint's secret it says valid, whether the header carries one
// signature or two (a rotation's overlap, this secret's second); with
// another secret, INVALID.
func TestReadmeRecipeChecksPrintedDelivery(t *testing.T) {
	for _, tool := range []string{"bash", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's recipe needs %s: %v", tool, err)
		}
	}
	recipe := readmeRecipe(t)
	other, _ := webhooks.NewSecret()
	now := time.Now()
	rotated := delivery(testBody, "", now)
	ours, theirs := webhooks.Sign(testSecret, now, []byte(testBody)), webhooks.Sign(other, now, []byte(testBody))
	rotated.Header.Set(webhooks.SignatureHeader, theirs+strings.TrimPrefix(ours, strings.Split(ours, ",")[0]))
	for _, tt := range []struct {
		name   string
		req    *http.Request
		secret string // the recipe's
		want   string
	}{
		{"one signature", delivery(testBody, testSecret, now), testSecret, "valid"},
		{"two signatures, the second ours", rotated, testSecret, "valid"},
		{"another secret", delivery(testBody, testSecret, now), other, "INVALID"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			newReceiver(testSecret, "", &out).ServeHTTP(httptest.NewRecorder(), tt.req)
			lines := strings.Split(out.String(), "\n")
			header, ok := strings.CutPrefix(lines[1], webhooks.SignatureHeader+": ")
			if !ok || len(lines) < 3 {
				t.Fatalf("no %s line under the first:\n%s", webhooks.SignatureHeader, out.String())
			}
			dir := t.TempDir()
			// As pasted into cat > body.json: the line, then Enter.
			if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(lines[2]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-c", recipe)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SIGNING_SECRET="+tt.secret, "header="+header)
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the recipe: %v\n%s", err, got)
			}
			if strings.TrimSpace(string(got)) != tt.want {
				t.Errorf("the recipe said %q, want %q", got, tt.want)
			}
		})
	}
}

// readmeRecipe returns the shell block of the README's "Verifying a
// signature".
func readmeRecipe(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(localtest.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "**Verifying a signature.**")
	_, block, ok2 := strings.Cut(after, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md: no shell block under **Verifying a signature.**")
	}
	return block
}

// TestReceiverForwards forwards a delivery to a server that records what
// it gets: the method, the headers and the body's bytes as they came, and
// the forward's status is printed.
func TestReceiverForwards(t *testing.T) {
	var (
		mu   sync.Mutex
		got  *http.Request
		body []byte
	)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got, body = r, nil
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer app.Close()
	var out bytes.Buffer
	rc := newReceiver(testSecret, app.URL+"/hooks", &out)
	req := delivery(testBody, testSecret, time.Now())
	req.Header.Set("X-Custom", "kept")
	rc.ServeHTTP(httptest.NewRecorder(), req)

	mu.Lock()
	defer mu.Unlock()
	if got == nil {
		t.Fatalf("nothing forwarded; output:\n%s", out.String())
	}
	if got.Method != http.MethodPost || got.URL.Path != "/hooks" {
		t.Errorf("forwarded %s %s, want POST /hooks", got.Method, got.URL.Path)
	}
	if string(body) != testBody {
		t.Errorf("forwarded body %q, want the bytes received %q", body, testBody)
	}
	for _, h := range []string{webhooks.SignatureHeader, webhooks.EventIDHeader, webhooks.EventTypeHeader, "Content-Type", "X-Custom"} {
		if got.Header.Get(h) != req.Header.Get(h) {
			t.Errorf("forwarded %s %q, want %q", h, got.Header.Get(h), req.Header.Get(h))
		}
	}
	if want := "  forwarded to " + app.URL + "/hooks: 202 Accepted\n\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("output ends\n%s\nwant %q", out.String(), want)
	}

	// A forward that fails is printed, and the delivery still answered 200.
	out.Reset()
	rc = newReceiver(testSecret, "http://127.0.0.1:1/hooks", &out)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, delivery(testBody, testSecret, time.Now()))
	if w.Code != http.StatusOK || !strings.Contains(out.String(), "  forward to http://127.0.0.1:1/hooks failed: ") {
		t.Errorf("answered %d; output:\n%s", w.Code, out.String())
	}
}

// TestOpenServesHTTPS opens a receiver with no company: it answers over
// HTTPS with a certificate of the local CA for 127.0.0.1 and localhost.
func TestOpenServesHTTPS(t *testing.T) {
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	s, err := open(ctx, config{secret: testSecret}, testCA, nil, &out)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(testCA.PEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	_, port, _ := net.SplitHostPort(s.l.Addr().String())
	for _, host := range []string{"127.0.0.1", "localhost"} {
		req, _ := http.NewRequest(http.MethodPost, "https://"+net.JoinHostPort(host, port)+"/", strings.NewReader(testBody))
		req.Header.Set(webhooks.SignatureHeader, webhooks.Sign(testSecret, time.Now(), []byte(testBody)))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200", host, resp.StatusCode)
		}
	}
	if n := strings.Count(out.String(), " verified\n"); n != 2 {
		t.Errorf("%d deliveries printed verified, want 2:\n%s", n, out.String())
	}
}

// syncBuffer is a bytes.Buffer that the receiver may write to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
