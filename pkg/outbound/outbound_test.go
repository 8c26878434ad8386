package outbound_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payments/pkg/outbound"
	"payments/pkg/outbound/outboundtest"
)

func TestRefused(t *testing.T) {
	tests := []struct {
		addr          string
		allowLoopback bool
		refused       bool
	}{
		{"93.184.215.14", false, false},
		{"8.8.8.8", false, false},
		{"2606:4700:4700::1111", false, false},
		{"127.0.0.1", false, true},
		{"127.0.0.1", true, false},
		{"127.8.9.10", true, false},
		{"::1", false, true},
		{"::1", true, false},
		{"::ffff:127.0.0.1", false, true},
		{"10.0.0.1", false, true},
		{"10.0.0.1", true, true},
		{"172.16.5.4", false, true},
		{"172.31.255.255", false, true},
		{"172.32.0.1", false, false},
		{"192.168.1.1", false, true},
		{"::ffff:192.168.1.1", false, true},
		{"169.254.169.254", false, true},
		{"169.254.169.254", true, true},
		{"169.254.1.1", false, true},
		{"fd00:ec2::254", false, true},
		{"fd00:ec2::254", true, true},
		{"fc00::1", false, true},
		{"fe80::1", false, true},
		{"100.64.0.1", false, true},
		{"100.127.255.255", false, true},
		{"0.0.0.0", false, true},
		{"0.1.2.3", false, true},
		{"::", false, true},
		{"224.0.0.1", false, true},
		{"ff02::1", false, true},
		{"255.255.255.255", false, true},
		{"240.0.0.1", false, true},
		{"198.18.0.1", false, true},
		{"64:ff9b::a00:1", false, true},
		{"2002:a00:1::", false, true},
	}
	for _, tt := range tests {
		name := tt.addr
		if tt.allowLoopback {
			name += " loopback allowed"
		}
		t.Run(name, func(t *testing.T) {
			reason := outbound.Refused(netip.MustParseAddr(tt.addr), tt.allowLoopback)
			if (reason != "") != tt.refused {
				t.Fatalf("Refused = %q, want refused %v", reason, tt.refused)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/x", true},
		{"https://hooks.example.com:8443/x?y=1", true},
		{"http://hooks.example.com/x", false},
		{"ftp://hooks.example.com/x", false},
		{"https:///x", false},
		{"https://user:pw@hooks.example.com/", false},
		{"hooks.example.com/x", false},
		{"", false},
		{"https:opaque", false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := outbound.CheckURL(tt.url)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, outbound.ErrNotHTTPS)) {
				t.Fatalf("CheckURL = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestRefusedAddressesAreNeverDialled points the client at addresses it must
// refuse: the dial observer, called only after the address check passes,
// never fires, the receiver never sees a connection, and the error is
// ErrRefusedAddress.
func TestRefusedAddressesAreNeverDialled(t *testing.T) {
	var hits atomic.Int64
	srv := outboundtest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	urls := []string{
		srv.URL,                              // 127.0.0.1, loopback not allowed
		"https://localhost:" + port + "/",    // a name that resolves to loopback
		"https://[::1]:" + port + "/",        // IPv6 loopback
		"https://10.0.0.1/",                  // private
		"https://192.168.0.10/",              // private
		"https://169.254.169.254/latest/",    // metadata
		"https://[fd00:ec2::254]/",           // IPv6 metadata
		"https://100.64.1.1/",                // CGNAT
		"https://0.0.0.0:" + port + "/",      // unspecified
		"https://[::ffff:127.0.0.1]:" + port, // mapped loopback
	}
	var dialled atomic.Int64
	c := outbound.New(outbound.WithRootCAs(srv.Pool), outbound.WithTimeout(3*time.Second),
		outbound.WithDialObserver(func(netip.AddrPort) { dialled.Add(1) }))
	for _, u := range urls {
		t.Run(u, func(t *testing.T) {
			start := time.Now()
			_, err := c.Post(context.Background(), u, nil, []byte(`{}`))
			if !errors.Is(err, outbound.ErrRefusedAddress) {
				t.Fatalf("err = %v, want ErrRefusedAddress", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("refusal took %v: the address was tried", d)
			}
		})
	}
	if dialled.Load() != 0 || srv.Conns.Load() != 0 || hits.Load() != 0 {
		t.Fatalf("dialled %d, connections %d, requests %d; want none", dialled.Load(), srv.Conns.Load(), hits.Load())
	}
}

func TestPost(t *testing.T) {
	var secondHits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || string(b) != `{"a":1}` || r.Header.Get("X-Test") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "thanks")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/second", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/second", func(w http.ResponseWriter, r *http.Request) { secondHits.Add(1) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	srv := outboundtest.NewTLSServer(t, mux)
	c := outbound.New(outbound.WithRootCAs(srv.Pool), outbound.WithAllowLoopback(true),
		outbound.WithTimeout(time.Second), outbound.WithMaxBody(1024))
	ctx := context.Background()
	h := http.Header{"X-Test": {"yes"}, "Content-Type": {"application/json"}}

	t.Run("answer", func(t *testing.T) {
		res, err := c.Post(ctx, srv.URL+"/ok", h, []byte(`{"a":1}`))
		if err != nil || res.StatusCode != http.StatusAccepted || string(res.Body) != "thanks" {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("localhost name with loopback allowed", func(t *testing.T) {
		port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
		res, err := c.Post(ctx, "https://localhost:"+port+"/ok", h, []byte(`{"a":1}`))
		if err != nil || res.StatusCode != http.StatusAccepted {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		res, err := c.Post(ctx, srv.URL+"/redirect", h, nil)
		if err != nil || res.StatusCode != http.StatusTemporaryRedirect || secondHits.Load() != 0 {
			t.Fatalf("%+v %v, second hits %d", res, err, secondHits.Load())
		}
	})
	t.Run("body capped", func(t *testing.T) {
		res, err := c.Post(ctx, srv.URL+"/big", h, nil)
		if err != nil || len(res.Body) != 1024 {
			t.Fatalf("read %d bytes, %v", len(res.Body), err)
		}
	})
	t.Run("time-out", func(t *testing.T) {
		start := time.Now()
		_, err := c.Post(ctx, srv.URL+"/slow", h, nil)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("err = %v, want a time-out", err)
		}
		if d := time.Since(start); d < 900*time.Millisecond || d > 2500*time.Millisecond {
			t.Fatalf("gave up after %v, want about 1s", d)
		}
	})
	t.Run("http refused", func(t *testing.T) {
		_, err := c.Post(ctx, strings.Replace(srv.URL, "https", "http", 1)+"/ok", h, nil)
		if !errors.Is(err, outbound.ErrNotHTTPS) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("unknown CA refused", func(t *testing.T) {
		plain := outbound.New(outbound.WithAllowLoopback(true)) // the certificate fails at once; no time-out under load
		_, err := plain.Post(ctx, srv.URL+"/ok", h, []byte(`{"a":1}`))
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("err = %v, want a certificate error", err)
		}
	})
}

func TestGet(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Write([]byte(strings.Repeat("x", 1024)))
	})
	mux.HandleFunc("/one-more", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 1025)))
	})
	mux.HandleFunc("/missing", http.NotFound)
	srv := outboundtest.NewTLSServer(t, mux)
	c := outbound.New(outbound.WithRootCAs(srv.Pool), outbound.WithAllowLoopback(true), outbound.WithMaxBody(1024))
	tests := []struct {
		path    string
		status  int
		bytes   int
		tooLong bool
	}{
		{"/exact", http.StatusOK, 1024, false},
		{"/one-more", http.StatusOK, 0, true},
		{"/missing", http.StatusNotFound, len("404 page not found\n"), false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res, err := c.Get(context.Background(), srv.URL+tt.path)
			if errors.Is(err, outbound.ErrTooLarge) != tt.tooLong {
				t.Fatalf("err = %v, too large expected: %v", err, tt.tooLong)
			}
			if !tt.tooLong && (err != nil || res.StatusCode != tt.status || len(res.Body) != tt.bytes) {
				t.Fatalf("status %d, %d bytes, %v; want %d, %d bytes", res.StatusCode, len(res.Body), err, tt.status, tt.bytes)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	if outbound.DefaultTimeout != 10*time.Second || outbound.DefaultMaxBody != 64<<10 {
		t.Fatalf("defaults %v %d", outbound.DefaultTimeout, outbound.DefaultMaxBody)
	}
	t.Setenv(outbound.AllowLoopbackEnv, "")
	if outbound.AllowLoopbackFromEnv() {
		t.Error("loopback allowed without the variable")
	}
	t.Setenv(outbound.AllowLoopbackEnv, "true")
	if !outbound.AllowLoopbackFromEnv() {
		t.Error("OUTBOUND_ALLOW_LOOPBACK=true not honoured")
	}
}

// TestSSLCertFile proves the standard way of trusting a CA works: a client
// without WithRootCAs, in a process started with SSL_CERT_FILE naming the
// receiver's CA, reaches the receiver. The check runs in a child process
// because Go reads the system roots once per process.
func TestSSLCertFile(t *testing.T) {
	if u := os.Getenv("OUTBOUNDTEST_URL"); u != "" {
		c := outbound.New(outbound.WithAllowLoopback(true), outbound.WithTimeout(5*time.Second))
		res, err := c.Post(context.Background(), u, nil, []byte(`{}`))
		if err != nil || res.StatusCode != http.StatusNoContent {
			t.Fatalf("child: %+v %v", res, err)
		}
		return
	}
	srv := outboundtest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	cmd := exec.Command(os.Args[0], "-test.run=^TestSSLCertFile$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OUTBOUNDTEST_URL="+srv.URL, "SSL_CERT_FILE="+srv.CAFile, "SSL_CERT_DIR=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	if srv.Conns.Load() == 0 {
		t.Fatal("the child never reached the receiver")
	}
}
