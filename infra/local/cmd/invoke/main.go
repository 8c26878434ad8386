// Command invoke runs one function's bootstrap on an event file, with no
// Docker, against the stack that `make run` started, as `sam local invoke`
// does: it builds the function's bootstrap for this machine (make
// build-<LogicalId>, with make build's flags), starts it under AWS's
// Lambda Runtime Interface Emulator (package rie) with the environment the
// template gives the function, invokes it with the event and prints its
// JSON response, indented (make invoke FN=wallets EVENT=events/wallets/list.json).
// The emulator's and the function's output (logs, EMF metric lines, the
// START, END and REPORT lines) go to standard error.
//
// In the event, "Bearer TOKEN" becomes "Bearer " + the -token flag (or
// $TOKEN), the test admin key "local-admin-key" becomes the stack's admin
// key, the document URLs under https://documents.example.com become the
// stack's sample documents, which the function trusts and may reach as
// `make run`'s do, and the placeholder of the card issuer's signature
// (samples.IssuerSignature) becomes the signature of the event's body, made
// now with the stack's issuer webhook secret. The other placeholder ids of the sample events (docs/local.md) are
// left as they are: they name records of the tests' fixture, not of this
// stack. A CodeDeploy hook (deploy-check) cannot be run: it needs CodeDeploy.
//
// Usage:
//
//	invoke -fn NAME -event FILE [-token TOKEN]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"payments/infra/local/devserver"
	"payments/infra/local/rie"
	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/pkg/app"
	"payments/pkg/outbound"
)

func main() {
	fn := flag.String("fn", "", "the function: its folder under functions/ or its logical id")
	eventFile := flag.String("event", "", "the event file (JSON)")
	token := flag.String("token", os.Getenv("TOKEN"), `access token that replaces "Bearer TOKEN" in the event`)
	flag.Parse()
	if *fn == "" || *eventFile == "" {
		fmt.Fprintln(os.Stderr, "usage: invoke -fn NAME -event FILE [-token TOKEN]")
		os.Exit(2)
	}
	out, err := invoke(context.Background(), *fn, *eventFile, *token)
	if err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

func invoke(ctx context.Context, name, eventFile, token string) ([]byte, error) {
	root, err := stack.FindRoot()
	if err != nil {
		return nil, err
	}
	data, err := stack.DataDir(root)
	if err != nil {
		return nil, err
	}
	st, err := stack.ReadState(data)
	if err != nil {
		return nil, err
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	var fn *samtemplate.Function
	for _, f := range tpl.Functions() {
		if f.Dir == name || f.LogicalID == name {
			fn = &f
			break
		}
	}
	if fn == nil {
		return nil, fmt.Errorf("no function %q in template.yaml", name)
	}
	if app.HookFunctions[fn.Dir] != nil {
		return nil, fmt.Errorf("%s is CodeDeploy's hook: it reads a deployment from CodeDeploy and invokes Lambda, neither of which runs locally; its tests run it against a fake (pkg/function/deploycheck)", fn.Dir)
	}
	payload, err := os.ReadFile(eventFile)
	if err != nil {
		return nil, err
	}
	secrets := map[string]string{}
	for env, file := range stack.SecretFiles {
		if v := os.Getenv(env); v != "" {
			secrets[env] = v
		} else if secrets[env], err = stack.Secret(filepath.Join(data, file)); err != nil {
			return nil, err
		}
	}
	if bytes.Contains(payload, []byte("Bearer TOKEN")) {
		if token == "" {
			fmt.Fprintln(os.Stderr, `invoke: the event has the placeholder "Bearer TOKEN": pass -token (or TOKEN=…) to replace it`)
		} else {
			payload = bytes.ReplaceAll(payload, []byte("Bearer TOKEN"), []byte("Bearer "+token))
		}
	}
	payload = bytes.ReplaceAll(payload, []byte(`"local-admin-key"`), []byte(`"`+secrets["ADMIN_API_KEY"]+`"`))
	if st.DocumentsURL != "" {
		payload = bytes.ReplaceAll(payload, []byte(samples.PlaceholderURL), []byte(st.DocumentsURL))
	}
	// Last: the signature covers the body as sent.
	if payload, err = samples.SignIssuerEvent(payload, secrets["ISSUER_WEBHOOK_SECRET"], time.Now()); err != nil {
		return nil, err
	}

	res := devserver.Resources{
		Stage: "local", TableName: st.TableName, AuditTableName: st.AuditTableName, QueueURLs: st.QueueURLs, Secrets: secrets,
		Base: st.Env(), UserPoolID: st.UserPoolID, UserPoolClientID: st.UserPoolClientID,
		Params: map[string]string{"PublicIssuerUrl": st.BaseURL}, // make run's tokens name its API as their issuer
	}
	env, err := devserver.FunctionEnv(tpl, *fn, res)
	if err != nil {
		return nil, err
	}
	if st.DocumentsURL != "" {
		env["SSL_CERT_FILE"] = st.CAFile
		env[outbound.AllowLoopbackEnv] = "true"
	}
	dir := filepath.Join(root, ".cache", "invoke", fn.Dir)
	build := exec.CommandContext(ctx, "make", "-s", "build-"+fn.LogicalID, "LAMBDA_ENV=CGO_ENABLED=0", "ARTIFACTS_DIR="+dir)
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("make build-%s: %w", fn.LogicalID, err)
	}
	inst, err := rie.Start(ctx, rie.Options{
		Emulator:  rie.Binary(root),
		Bootstrap: filepath.Join(dir, "bootstrap"),
		Env:       env,
		Timeout:   time.Duration(devserver.FunctionInt(tpl, *fn, "Timeout", 3)) * time.Second,
		Output:    os.Stderr,
	})
	if err != nil {
		return nil, err
	}
	defer inst.Stop()
	out, err := inst.Invoke(ctx, payload)
	if err != nil {
		return nil, err
	}
	// Indented, with <, > and & escaped in its strings: as json.MarshalIndent
	// gives the handler's answer (aws-lambda-go sends it unescaped).
	var indented, escaped bytes.Buffer
	if err := json.Indent(&indented, out, "", "  "); err != nil {
		return nil, fmt.Errorf("the function answered what is not JSON: %w: %s", err, out)
	}
	json.HTMLEscape(&escaped, indented.Bytes())
	return escaped.Bytes(), nil
}
