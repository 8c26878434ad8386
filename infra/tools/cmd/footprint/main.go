// Command footprint prints what each function costs before it serves a
// request, against the project's targets (docs/footprint.md):
//
//	footprint size -dir bin
//	    the size of bin/<function>/bootstrap as built and gzipped
//	    (target: at most 3.0 MiB gzipped; 3.5 MiB for a function that
//	    calls the card issuer's API, which links Stripe's library)
//	footprint coldstart -dir DIR -runs 30
//	    exec → first GET …/invocation/next of DIR/<function>/bootstrap
//	    (the Init Duration that AWS's Runtime Interface Emulator,
//	    .cache/bin/aws-lambda-rie, logs when its first invocation, the
//	    health check, starts it), runs times each, beside the hello-world
//	    floor DIR/hello/bootstrap (target: every median at most 2.5 × the
//	    floor's), and the connections each made during init to the AWS
//	    endpoints of its environment (target: none, since the local
//	    environment gives secrets by value)
//
// make size and make coldstart build the bootstraps and run it. It exits 1
// when a target is missed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"payments/infra/local/devserver"
	"payments/infra/local/rie"
	"payments/infra/local/samtemplate"
	"payments/infra/local/stack"
	"payments/infra/tools/footprint"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: footprint size|coldstart [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "bin", "the folder of <function>/bootstrap")
	runs := fs.Int("runs", 30, "cold starts per function")
	fs.Parse(os.Args[2:])
	tpl, err := samtemplate.Load("template.yaml")
	if err != nil {
		fail(err)
	}
	var ok bool
	switch os.Args[1] {
	case "size":
		ok, err = size(*dir, tpl)
	case "coldstart":
		ok, err = coldstart(*dir, *runs, tpl)
	default:
		err = fmt.Errorf("unknown command %q: size or coldstart", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	if !ok {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "footprint:", err)
	os.Exit(2)
}

func functions(tpl *samtemplate.Template) []string {
	var names []string
	for _, fn := range tpl.Functions() {
		names = append(names, fn.Dir)
	}
	return names
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func size(dir string, tpl *samtemplate.Template) (bool, error) {
	sizes, err := footprint.Sizes(dir, functions(tpl))
	if err != nil {
		return false, err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "function\tbootstrap\tgzipped\ttarget\tmet\t\n")
	ok := true
	for _, s := range sizes {
		verdict, target := "yes", footprint.MaxGzip(s.Function)
		if s.Gzip > target {
			verdict, ok = "NO", false
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t≤ %s\t%s\t\n", s.Function, mib(s.Bytes), mib(s.Gzip), mib(target), verdict)
	}
	return ok, w.Flush()
}

// localResources are what the functions' environments refer to: nothing
// is called during init, so none of it needs to exist.
func localResources(tpl *samtemplate.Template) devserver.Resources {
	queues := map[string]string{}
	for _, q := range tpl.Queues() {
		queues[q.Name] = "http://127.0.0.1:9/000000000000/coldstart-" + q.Name
	}
	return devserver.Resources{
		Stage:     "local",
		TableName: "coldstart", AuditTableName: "coldstart-audit",
		QueueURLs: queues,
		Secrets: map[string]string{
			"TOKEN_KEY_A":           "0a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223242526272829",
			"TOKEN_KEY_B":           "1a1b1c1d1e1f202122232425262728292a2b2c2d2e2f30313233343536373839",
			"ADMIN_API_KEY":         "coldstart-admin-key",
			"ISSUER_WEBHOOK_SECRET": "coldstart-issuer-secret-0123456789abcdef",
			"OPERATOR_API_TOKEN":    "coldstart-operator-token",
			"ISSUER_API_KEY":        "coldstart-issuer-api-key",
			"CARD_KEY":              "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
			"WEBHOOK_KEY":           "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100",
			"DASHBOARD_SESSION_KEY": "coldstart-dashboard-session-key0",
		},
		UserPoolID:       "us-east-1_coldstart",
		UserPoolClientID: "coldstartclient",
		Base: []string{
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=coldstart", "AWS_SECRET_ACCESS_KEY=coldstart",
			"AWS_ENDPOINT_URL_DYNAMODB=x", "AWS_ENDPOINT_URL_SQS=x", "AWS_ENDPOINT_URL_S3=x",
			"AWS_ENDPOINT_URL_KMS=x", "AWS_ENDPOINT_URL_SECRETS_MANAGER=x", "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER=x",
		},
	}
}

// coldstart measures the floor and every function in rounds: each round
// starts each of them once, in turn, so that whatever else the machine is
// doing weighs on all of them alike.
func coldstart(dir string, runs int, tpl *samtemplate.Template) (bool, error) {
	ctx := context.Background()
	type subject struct {
		name  string
		env   []string
		inits []time.Duration
		conns int64
	}
	root, err := stack.FindRoot()
	if err != nil {
		return false, err
	}
	emulator := rie.Binary(root)
	subjects := []*subject{{name: "hello", env: []string{
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=coldstart", "AWS_SECRET_ACCESS_KEY=coldstart",
		"AWS_LAMBDA_FUNCTION_NAME=hello", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
	}}}
	res := localResources(tpl)
	for _, fn := range tpl.Functions() {
		vars, err := devserver.FunctionEnv(tpl, fn, res)
		if err != nil {
			return false, err
		}
		s := &subject{name: fn.Dir}
		for k, v := range vars {
			s.env = append(s.env, k+"="+v)
		}
		subjects = append(subjects, s)
	}
	for range runs {
		for _, s := range subjects {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			st, err := footprint.ColdStart(ctx, emulator, filepath.Join(dir, s.name, "bootstrap"), s.env)
			cancel()
			if err != nil {
				return false, err
			}
			s.inits = append(s.inits, st.Init)
			s.conns += st.Connections
		}
	}
	floor := footprint.Summarize(subjects[0].inits)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "function\tmin\tmedian\tmax\t× floor\t≤ %.1f ×\tAWS connections at init\t\n", footprint.MaxColdStartRatio)
	ok := true
	for i, s := range subjects {
		st := footprint.Summarize(s.inits)
		ratio := float64(st.Median) / float64(floor.Median)
		verdict, name := "yes", s.name
		if i == 0 {
			verdict, name = "", "hello (floor)"
		} else if ratio > footprint.MaxColdStartRatio || s.conns > 0 {
			verdict, ok = "NO", false
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.2f\t%s\t%d\t\n", name, ms(st.Min), ms(st.Median), ms(st.Max), ratio, verdict, s.conns)
	}
	fmt.Fprintf(w, "(%d runs each, in rounds)\t\t\t\t\t\t\t\n", runs)
	return ok, w.Flush()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
