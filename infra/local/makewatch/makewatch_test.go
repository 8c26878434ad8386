//go:build linux

package makewatch_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"payments/infra/local/makewatch"
	"payments/pkg/waittest"
)

// helperEnv, when set, makes the test binary the command a recipe execs:
// it watches its parent make, writes make's pid to the file the variable
// names with ".ready" added, and then why it would stop to the file.
const helperEnv = "MAKEWATCH_HELPER_OUT"

func TestMain(m *testing.M) {
	if out := os.Getenv(helperEnv); out != "" {
		stopping := makewatch.Watch(context.Background(), os.Getppid(), slog.New(slog.NewTextHandler(os.Stderr, nil)))
		os.WriteFile(out+".ready", []byte(strconv.Itoa(os.Getppid())), 0o644)
		os.WriteFile(out, []byte(<-stopping+"\n"), 0o644)
		return
	}
	os.Exit(m.Run())
}

// startMake runs shell, in its own process group, where it runs make with
// a recipe that execs this test binary as the helper. It returns make's
// pid once the helper watches it, the files of the helper's answer and
// log, and a channel closed when the shell is done.
func startMake(t *testing.T, shell string) (pid int, answer, log string, done <-chan struct{}) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	answer, log = filepath.Join(dir, "answer"), filepath.Join(dir, "log")
	mk := "SHELL := bash\nwatch:\n\t@exec \"$$HELPER\" 2>" + log + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", shell)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELPER="+bin, helperEnv+"="+answer, "MAKEFLAGS=", "MAKELEVEL=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { cmd.Wait(); close(ch) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-ch
	})
	waittest.Until(t, 30*time.Second, "the helper watches make", func() bool {
		b, _ := os.ReadFile(answer + ".ready")
		pid, _ = strconv.Atoi(string(b))
		return pid != 0
	})
	return pid, answer, log, ch
}

// TestWatch signals a make whose recipe runs a command that watches it:
// the command learns that make got the signal (which make does not pass
// on, but for SIGTERM), or that make is gone.
func TestWatch(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGINT, "make got SIGINT"},
		{syscall.SIGHUP, "make got SIGHUP"},
		{syscall.SIGKILL, "make exited"},
	} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			pid, answer, _, _ := startMake(t, "exec make -s watch")
			if err := syscall.Kill(pid, tt.sig); err != nil {
				t.Fatal(err)
			}
			waittest.Until(t, 10*time.Second, "the command answers", func() bool {
				b, _ := os.ReadFile(answer)
				return strings.HasSuffix(string(b), "\n")
			})
			if b, _ := os.ReadFile(answer); string(b) != tt.want+"\n" {
				t.Errorf("the command says %q, want %q", b, tt.want)
			}
		})
	}
}

// TestWatchSaysMakeIgnoresSIGINT starts make as `make … &` in a
// non-interactive shell does, with SIGINT ignored: the command logs that
// kill -INT cannot stop make, and make still stops on SIGTERM.
func TestWatchSaysMakeIgnoresSIGINT(t *testing.T) {
	pid, _, log, done := startMake(t, "make -s watch & wait")
	waittest.Until(t, 10*time.Second, "the command logs that make ignores SIGINT", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "make ignores SIGINT")
	})
	syscall.Kill(pid, syscall.SIGTERM)
	waittest.Until(t, 10*time.Second, "make stops on SIGTERM", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
}
