package main

import (
	"bufio"
	"errors"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExec runs `devstack exec` as `make test` does: the command sees the
// emulators' environment, its exit status is devstack's, and once it
// returns no emulator is left listening.
func TestExec(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "devstack")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := `for v in AWS_ENDPOINT_URL_DYNAMODB AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_S3; do eval "echo \$$v"; done
[ "$AWS_ACCESS_KEY_ID" = local ] && [ "$AWS_REGION" = us-east-1 ] || exit 9
exit 3`
	cmd := exec.Command(bin, "exec", "--", "sh", "-c", script)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v, want status 3; output:\n%s", err, out)
	}
	var endpoints []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if u, err := url.Parse(sc.Text()); err == nil && u.Host != "" {
			endpoints = append(endpoints, u.Host)
		}
	}
	if len(endpoints) != 3 {
		t.Fatalf("endpoints %q, want three", endpoints)
	}
	// Each emulator is devstack's own child, which it waited for: its
	// sockets closed when it exited.
	for _, host := range endpoints {
		if c, err := net.DialTimeout("tcp", host, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after devstack exec returned", host)
		}
	}
}
