// Command samenv writes the file that `sam local invoke --env-vars` and
// `sam local start-api --env-vars` read, so that the functions that SAM
// runs in Docker use the emulators and the names of the running `make run`
// (make sam-env). The file is SAM's: one object per function's LogicalId,
// each variable its value:
//
//	{"WalletsFunction": {"TABLE_NAME": "payments-local", "AWS_ENDPOINT_URL_DYNAMODB": "http://host.docker.internal:8000", …}, …}
//
// Each function gets the environment `make run` gives it (the template's
// variables resolved to the local table, queues and buckets, the secrets
// by value, the emulators' endpoints, credentials and region), with the
// host of every emulator's URL, 127.0.0.1, replaced by -host: the address
// at which a container reaches this machine. The tokens' issuer stays make
// run's API URL: it is a name, which make run's tokens carry. A secret or KMS key that AWS
// names with NAME_ARN is given by value as NAME, and NAME_ARN is set empty,
// so that the template's ARN is overridden and the function takes NAME (as
// function.ConfigFromEnv does locally).
//
// SAM applies a variable of the file only when the template declares it for
// the function (docs/local.md, "Running the functions in Docker: make
// sam-env").
//
// Usage:
//
//	samenv [-host host.docker.internal] [-o .cache/sam-env.json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"payments/infra/local/devserver"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
)

func main() {
	host := flag.String("host", "host.docker.internal", "the host name or address at which a container reaches this machine")
	out := flag.String("o", "", "the file to write (default: sam-env.json in the data folder, .cache)")
	flag.Parse()
	if err := run(*host, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sam-env:", err)
		os.Exit(1)
	}
}

func run(host, out string) error {
	root, err := stack.FindRoot()
	if err != nil {
		return err
	}
	data, err := stack.DataDir(root)
	if err != nil {
		return err
	}
	st, err := stack.ReadState(data)
	if err != nil {
		return err
	}
	secrets := map[string]string{}
	for env, file := range stack.SecretFiles {
		if v := os.Getenv(env); v != "" {
			secrets[env] = v
		} else if secrets[env], err = stack.Secret(filepath.Join(data, file)); err != nil {
			return err
		}
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	vars, err := Variables(tpl, st, secrets, host)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(data, "sam-env.json")
	}
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600) // it holds the local secrets
	if err != nil {
		return err
	}
	if err := write(f, vars); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %s: the variables of %d functions, the emulators at %s\n", out, len(vars), host)
	fmt.Printf("  sam local invoke WalletsFunction --env-vars %s --event events/wallets/list.json\n", out)
	fmt.Printf("  sam local start-api --env-vars %s\n", out)
	return nil
}

// Variables returns the environment of each function of tpl by LogicalId,
// as `make run` (whose state is st) gives it, with the emulators' host
// replaced by host.
func Variables(tpl *samtemplate.Template, st stack.State, secrets map[string]string, host string) (map[string]map[string]string, error) {
	res := devserver.Resources{
		Stage: "local", TableName: st.TableName, AuditTableName: st.AuditTableName, QueueURLs: map[string]string{}, Secrets: secrets,
		Base: st.Env(), UserPoolID: st.UserPoolID, UserPoolClientID: st.UserPoolClientID,
		Params: map[string]string{"PublicIssuerUrl": st.BaseURL}, // tokens name make run's API as their issuer
	}
	for name, u := range st.QueueURLs {
		res.QueueURLs[name] = u
	}
	all := map[string]map[string]string{}
	for _, fn := range tpl.Functions() {
		env, err := devserver.FunctionEnv(tpl, fn, res)
		if err != nil {
			return nil, err
		}
		for k, v := range env {
			if strings.HasPrefix(k, "AWS_LAMBDA_") { // SAM sets Lambda's own
				delete(env, k)
				continue
			}
			if v != st.BaseURL { // the tokens' issuer: a name, not an address
				env[k] = rehost(v, host)
			}
		}
		// The template's NAME_ARN, emptied: the function takes NAME.
		for name := range tpl.EnvironmentWith(fn, res.Params) {
			if plain, ok := strings.CutSuffix(name, "_ARN"); ok && env[plain] != "" {
				env[name] = ""
			}
		}
		all[fn.LogicalID] = env
	}
	return all, nil
}

// rehost replaces the loopback host of v, when v is an http(s) URL, with
// host: a container's 127.0.0.1 is its own.
func rehost(v, host string) string {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return v
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
	default:
		return v
	}
	if p := u.Port(); p != "" {
		u.Host = host + ":" + p
	} else {
		u.Host = host
	}
	return u.String()
}

func write(w io.Writer, vars map[string]map[string]string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(vars)
}
