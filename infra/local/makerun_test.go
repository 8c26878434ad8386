//go:build linux

package local_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"payments/infra/local/localtest"
	"payments/infra/local/stack"
	"payments/pkg/waittest"
)

// TestMakeRunStops starts `make run` on free ports with a fresh data
// folder, waits until it serves, signals it, and waits until make and
// every process it started have exited and every port is closed: SIGINT
// or SIGTERM sent to the make process alone (kill, a process manager), and
// SIGINT sent to its whole process group (a terminal's Ctrl-C).
func TestMakeRunStops(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sig   syscall.Signal
		group bool
	}{
		{"kill -INT make", syscall.SIGINT, false},
		{"kill -TERM make", syscall.SIGTERM, false},
		{"Ctrl-C", syscall.SIGINT, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ports := map[string]int{}
			for _, name := range []string{"PORT", "DYNAMODB_PORT", "SQS_PORT", "S3_PORT", "DOCS_PORT", "STRIPE_MOCK_PORT", "COGNITO_PORT"} {
				ports[name] = freePort(t)
			}
			m := startMake(t, "run", ports)
			api := fmt.Sprintf("http://127.0.0.1:%d/api/v1/wallets", ports["PORT"])
			client := &http.Client{Timeout: 2 * time.Second}
			m.waitReady(t, 3*time.Minute, "make run serves "+api, func() bool {
				resp, err := client.Get(api)
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusUnauthorized
			})
			procs := descendants(m.cmd.Process.Pid)
			if len(procs) < 6 {
				t.Fatalf("make runs %d processes, want devstack and the five emulators: %v", len(procs), procs)
			}
			m.stop(t, tt.sig, tt.group, procs, ports)
		})
	}
}

// TestMakeListenStops starts `make listen` and stops it with SIGINT sent
// to the make process alone.
func TestMakeListenStops(t *testing.T) {
	ports := map[string]int{"LISTEN_PORT": freePort(t)}
	m := startMake(t, "listen", ports)
	m.waitReady(t, 2*time.Minute, "make listen listens", func() bool { return true })
	procs := descendants(m.cmd.Process.Pid)
	if len(procs) != 1 {
		t.Fatalf("make runs %v, want listen alone", procs)
	}
	m.stop(t, syscall.SIGINT, false, procs, ports)
}

// makeProc is a make started by startMake.
type makeProc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error // make's exit, once done is closed
}

// startMake starts `make target` in its own process group, with ports (as
// variables of the environment) and its data in a temporary folder. make
// is killed with its group if the test ends first.
func startMake(t *testing.T, target string, ports map[string]int) *makeProc {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	m := &makeProc{out: &syncBuffer{}, done: make(chan struct{})}
	m.cmd = exec.Command("make", target)
	m.cmd.Dir = localtest.Root(t)
	for _, kv := range os.Environ() {
		// Not a sub-make of the `make test` that may run this test.
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			m.cmd.Env = append(m.cmd.Env, kv)
		}
	}
	m.cmd.Env = append(m.cmd.Env, stack.DataDirEnv+"="+filepath.Join(t.TempDir(), "data"))
	for name, port := range ports {
		m.cmd.Env = append(m.cmd.Env, fmt.Sprintf("%s=%d", name, port))
	}
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		m.err = m.cmd.Wait()
		close(m.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL) // the emulators die with devstack (Pdeathsig)
		<-m.done
	})
	return m
}

// waitReady waits until make has printed "ready" and ready returns true,
// failing t if make exits first.
func (m *makeProc) waitReady(t *testing.T, timeout time.Duration, what string, ready func() bool) {
	t.Helper()
	waittest.Until(t, timeout, what, func() bool {
		select {
		case <-m.done:
			t.Fatalf("make exited: %v; output:\n%s", m.err, m.out.String())
		default:
		}
		return strings.Contains(m.out.String(), "\nready\n") && ready()
	})
}

// stop sends sig to make (to its process group when group is set), waits
// until make, procs and every port are gone, and checks that make ended
// as on Ctrl-C: killed by the signal, once its children were gone.
func (m *makeProc) stop(t *testing.T, sig syscall.Signal, group bool, procs []proc, ports map[string]int) {
	t.Helper()
	target := m.cmd.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, sig); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, time.Minute, "make and every process it started have exited and its ports are closed", func() bool {
		select {
		case <-m.done:
		default:
			return false
		}
		for _, p := range procs {
			if p.alive() {
				return false
			}
		}
		for _, port := range ports {
			if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second); err == nil {
				c.Close()
				return false
			}
		}
		return true
	})
	var ee *exec.ExitError
	if !errors.As(m.err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != sig {
		t.Errorf("make ended with %v, want killed by %v; output:\n%s", m.err, sig, m.out.String())
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// proc is a process, told from a later one with its pid by its start time.
type proc struct {
	pid   int
	start string
	cmd   string
}

func (p proc) String() string { return fmt.Sprintf("%d %s", p.pid, p.cmd) }

// alive reports whether p still runs (a zombie does not).
func (p proc) alive() bool {
	_, start, state, ok := procStat(p.pid)
	return ok && start == p.start && state != "Z" && state != "X"
}

// descendants returns the processes below pid: its children, theirs, ….
func descendants(pid int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, start, _, ok := procStat(n)
		if !ok {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n))
		children[ppid] = append(children[ppid], proc{pid: n, start: start, cmd: string(bytes.ReplaceAll(bytes.TrimRight(cmd, "\x00"), []byte{0}, []byte(" ")))})
	}
	var all []proc
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			all = append(all, c)
			queue = append(queue, c.pid)
		}
	}
	return all
}

// procStat reads the parent, start time and state of process pid from
// /proc/<pid>/stat; ok is false when there is no such process.
func procStat(pid int) (ppid int, start, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", "", false
	}
	// pid (comm) state ppid … starttime (field 22); comm may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, "", "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, "", "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[19], f[0], true
}

// syncBuffer is a bytes.Buffer that a process's output may be written to
// while the test reads it.
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
