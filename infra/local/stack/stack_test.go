package stack

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStartStop starts a throwaway stack, checks each emulator answers, and
// that Stop leaves no process behind.
func TestStartStop(t *testing.T) {
	root, err := FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Root: root, Buckets: []string{"documents"}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.S3Endpoint + "/documents")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET bucket documents: status %d", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, s.StripeMockURL+"/v1/issuing/cards/ic_1", nil)
	req.Header.Set("Authorization", "Bearer sk_test_stack")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("stripe-mock GET /v1/issuing/cards/ic_1: status %d", resp.StatusCode)
	}
	if !slices.Contains(s.Env(), StripeMockEnv+"="+s.StripeMockURL) {
		t.Errorf("Env() %q lacks %s", s.Env(), StripeMockEnv)
	}
	if !slices.Contains(s.Env(), CognitoEndpointEnv+"="+s.CognitoEndpoint) {
		t.Errorf("Env() %q lacks %s", s.Env(), CognitoEndpointEnv)
	}
	pool, err := CreateUserPool(ctx, s.CognitoEndpoint, UserPoolName)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := CreateUserPool(ctx, s.CognitoEndpoint, UserPoolName); err != nil || again != pool {
		t.Errorf("CreateUserPool again: %+v, %v; want %+v, the pool it made", again, err, pool)
	}
	if resp, err = http.Get(s.CognitoEndpoint + "/" + pool.PoolID + "/.well-known/jwks.json"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("cognito-local GET the pool's JWKS: status %d", resp.StatusCode)
	}
	var pids []int
	for _, p := range s.procs {
		pids = append(pids, p.Pid())
	}
	logDir := s.LogDir
	s.Stop()
	stopped = true
	for _, pid := range pids {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d still exists after Stop (%v)", pid, err)
		}
	}
	if _, err := os.Stat(logDir); !os.IsNotExist(err) {
		t.Errorf("temporary log folder %s left behind", logDir)
	}
}

func TestStartRefusesTakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	root, _ := FindRoot()
	_, err = Start(context.Background(), Options{Root: root, SQSPort: port})
	if !errors.Is(err, ErrPortInUse) {
		t.Errorf("err = %v, want ErrPortInUse", err)
	}
}

func TestQueueURLEnv(t *testing.T) {
	for name, want := range map[string]string{
		"payouts":     "PAYOUTS_QUEUE_URL",
		"webhooks":    "WEBHOOKS_QUEUE_URL",
		"payouts-dlq": "PAYOUTS_DLQ_QUEUE_URL",
		"card.events": "CARD_EVENTS_QUEUE_URL",
	} {
		if got := QueueURLEnv(name); got != want {
			t.Errorf("QueueURLEnv(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "secret")
	first, err := Secret(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 64 {
		t.Errorf("secret %q is not 32 bytes in hex", first)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", st.Mode(), err)
	}
	again, err := Secret(path)
	if err != nil || again != first {
		t.Errorf("second read %q, %v; want the first secret", again, err)
	}
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadState(dir); err == nil {
		t.Error("ReadState without a running stack succeeded")
	}
	want := State{Pid: 1, DynamoDBEndpoint: "http://127.0.0.1:8000", TableName: "t", QueueURLs: map[string]string{"payouts": "u"}}
	if err := WriteState(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(dir)
	if err != nil || got.TableName != want.TableName || got.QueueURLs["payouts"] != "u" || got.Pid != 1 {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestCheckPort(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckPort(port); err != nil {
		t.Errorf("free port %d: %v", port, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := CheckPort(port); !errors.Is(err, ErrPortInUse) {
		t.Errorf("taken port: %v, want ErrPortInUse", err)
	}
}
