// Package rie runs a function's bootstrap under AWS's Lambda Runtime
// Interface Emulator (aws-lambda-rie, the emulator inside `sam local`'s
// images, which make install builds into .cache/bin), so that it is started
// and invoked locally as `sam local invoke` does: the emulator serves
// POST /2015-03-31/functions/function/invocations, execs the bootstrap at
// the first invocation with the environment it was itself given, and serves
// it the Lambda Runtime API.
//
// What the emulator reads: the bootstrap as its arguments; its listen
// address (--runtime-interface-emulator-address) and the Runtime API's
// (--runtime-api-address), both picked free here; the function's timeout
// (AWS_LAMBDA_FUNCTION_TIMEOUT, seconds), name (AWS_LAMBDA_FUNCTION_NAME,
// which makes the invoked function's ARN), version and memory
// (AWS_LAMBDA_FUNCTION_VERSION, AWS_LAMBDA_FUNCTION_MEMORY_SIZE) from its
// environment, all of which it passes on to the bootstrap with
// AWS_LAMBDA_RUNTIME_API and the credentials. It logs the init's duration,
// from exec to the runtime's first request for an invocation ("INIT
// REPORT(durationMs: …)"), which Instance.Init reads.
package rie

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Binary returns the path of the emulator that make install builds for the
// project at root.
func Binary(root string) string { return filepath.Join(root, ".cache", "bin", "aws-lambda-rie") }

// InvocationsPath is the path of the emulator's invoke API, Lambda's own.
const InvocationsPath = "/2015-03-31/functions/function/invocations"

var (
	// ErrNotInstalled reports a missing emulator.
	ErrNotInstalled = errors.New("rie: aws-lambda-rie is not installed: run make install")
	// ErrExited reports an emulator that is no longer running.
	ErrExited = errors.New("rie: the emulator exited")
)

// FunctionError is an error the function reported for an invocation (the
// body the emulator answers with), or Lambda's own error for a runtime
// that failed at init or exited ("Runtime.ExitError").
type FunctionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("rie: function error: %s: %s", e.Type, e.Message)
}

// Options say what to run and how.
type Options struct {
	// Emulator is the path of aws-lambda-rie (see Binary).
	Emulator string
	// Bootstrap is the path of the function's bootstrap; it runs in its
	// folder, as in /var/task.
	Bootstrap string
	// Env is the function's environment: all the emulator and the
	// bootstrap get, besides what the emulator sets (nothing is inherited).
	Env map[string]string
	// Timeout is the function's timeout (default 3 s, Lambda's).
	Timeout time.Duration
	// Output, when set, is given what the emulator and the bootstrap write
	// (their logs, the bootstrap's metrics), as they write it.
	Output io.Writer
}

// Instance is one emulator running one function: a Lambda instance.
type Instance struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the emulator's exit, once exited is closed
	out    *output
	once   sync.Once
}

// Start starts the emulator and returns once it accepts invocations; the
// bootstrap is started by the first. The emulator is stopped when the
// calling process dies (on Linux) or by Stop.
func Start(ctx context.Context, o Options) (*Instance, error) {
	if _, err := os.Stat(o.Emulator); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrNotInstalled, err)
	}
	var err error
	for range 3 { // a port picked free may be taken before the emulator binds it
		var inst *Instance
		if inst, err = start(ctx, o); err == nil || !errors.Is(err, ErrExited) {
			return inst, err
		}
	}
	return nil, err
}

func start(ctx context.Context, o Options) (*Instance, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	api, err := freeAddr()
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	env := maps.Clone(o.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = strconv.Itoa(int((timeout + time.Second - 1) / time.Second))
	bootstrap, err := filepath.Abs(o.Bootstrap)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Emulator, "--log-level", "info",
		"--runtime-interface-emulator-address", addr, "--runtime-api-address", api, bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	inst := &Instance{url: "http://" + addr + InvocationsPath, cmd: cmd, exited: make(chan struct{}), out: newOutput()}
	var w io.Writer = inst.out
	if o.Output != nil {
		w = io.MultiWriter(inst.out, o.Output)
	}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rie: %w", err)
	}
	go func() {
		inst.err = cmd.Wait()
		close(inst.exited)
	}()
	// The emulator accepts connections once it serves; until then, ask again.
	// It starts its Runtime API apart, in a goroutine of its own: an
	// invocation that came before that listened would start a bootstrap
	// that finds no Runtime API and exits.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if accepts(addr) && accepts(api) {
			return inst, nil
		}
		select {
		case <-inst.exited:
			return nil, fmt.Errorf("%w (%v) before serving: %s", ErrExited, inst.err, tail(inst.out.Bytes()))
		case <-ctx.Done():
			inst.Stop()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// accepts reports whether something accepts connections at addr.
func accepts(addr string) bool {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Invoke hands payload to the function, as Lambda's Invoke API does, and
// returns its answer. It fails with a *FunctionError when the function
// reports an error, or failed at init, and with ctx's error when ctx ends
// first.
func (inst *Instance) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, inst.url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		select {
		case <-inst.exited:
			return nil, fmt.Errorf("%w (%v)", ErrExited, inst.err)
		default:
			return nil, fmt.Errorf("rie: %w", err)
		}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("rie: %w", err)
	}
	if fe := functionError(body); fe != nil {
		return nil, fe
	}
	if resp.StatusCode != http.StatusOK {
		// An init that failed is logged before the answer, but may not have
		// been read yet.
		wait := time.NewTimer(5 * time.Second)
		defer wait.Stop()
		select {
		case <-inst.out.reported:
		case <-inst.exited:
		case <-ctx.Done():
		case <-wait.C:
		}
		if inst.out.initFailed() {
			return nil, &FunctionError{Type: "Runtime.InitError", Message: fmt.Sprintf("init failed (the emulator answered %s)", resp.Status)}
		}
		return nil, fmt.Errorf("rie: the emulator answered %s: %s", resp.Status, body)
	}
	return body, nil
}

// functionError returns the error body holds, or nil: an object with
// exactly errorType and errorMessage, and perhaps stackTrace (what
// aws-lambda-go posts for a handler's error). The emulator answers a
// function's error with 200 and that body, as `sam local invoke` prints
// it: the body is all that tells it from a response.
func functionError(body []byte) *FunctionError {
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil
	}
	typ, ok1 := fields["errorType"].(string)
	msg, ok2 := fields["errorMessage"].(string)
	delete(fields, "errorType")
	delete(fields, "errorMessage")
	delete(fields, "stackTrace")
	if !ok1 || !ok2 || len(fields) > 0 {
		return nil
	}
	return &FunctionError{Type: typ, Message: msg}
}

// Init waits for the emulator to log the end of the function's init and
// returns how long it took, from the bootstrap's exec to its first request
// for an invocation, as Lambda's Init Duration. It fails with a
// *FunctionError when the init failed.
func (inst *Instance) Init(ctx context.Context) (time.Duration, error) {
	select {
	case <-inst.out.reported:
	case <-inst.exited:
		select {
		case <-inst.out.reported:
		default:
			return 0, fmt.Errorf("%w (%v) before the init ended", ErrExited, inst.err)
		}
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if inst.out.initFailed() {
		return 0, &FunctionError{Type: "Runtime.InitError", Message: "the bootstrap failed at init"}
	}
	return inst.out.initDuration(), nil
}

// Output returns what the emulator and the bootstrap have written so far.
func (inst *Instance) Output() []byte { return inst.out.Bytes() }

// Stop stops the emulator, which kills the bootstrap, waits for it and
// returns all they wrote.
func (inst *Instance) Stop() []byte {
	inst.once.Do(func() {
		inst.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-inst.exited:
		case <-time.After(5 * time.Second):
			inst.cmd.Process.Kill()
			<-inst.exited
		}
	})
	return inst.out.Bytes()
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return b
}

// The emulator's lines at the end of the first init: its status, then
// its duration.
var (
	initDoneLine   = regexp.MustCompile(`INIT RTDONE\(status: (\w+)`)
	initReportLine = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
)

// output is what the emulator and the bootstrap write, read as it comes
// for the end of the first init.
type output struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	scanned  int // up to the last full line read
	status   string
	duration time.Duration
	reported chan struct{} // closed at the first INIT REPORT
}

func newOutput() *output { return &output{reported: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	for {
		b := o.buf.Bytes()[o.scanned:]
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return len(p), nil
		}
		o.scanned += i + 1
		o.readLine(b[:i])
	}
}

func (o *output) readLine(line []byte) {
	select {
	case <-o.reported:
		return
	default:
	}
	if m := initDoneLine.FindSubmatch(line); m != nil && o.status == "" {
		o.status = string(m[1])
	}
	if m := initReportLine.FindSubmatch(line); m != nil {
		ms, _ := strconv.ParseFloat(string(m[1]), 64)
		o.duration = time.Duration(ms * float64(time.Millisecond))
		close(o.reported)
	}
}

func (o *output) initFailed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status != "" && o.status != "success"
}

func (o *output) initDuration() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.duration
}

func (o *output) Bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}
