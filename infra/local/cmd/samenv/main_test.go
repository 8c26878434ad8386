package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"payments/infra/local/localtest"
	"payments/infra/local/stack"
	"payments/pkg/function"
)

// TestVariables writes the file for a stack on 127.0.0.1 and reads it back
// as SAM would: every function of template.yaml must have its object,
// naming every variable the function reads (function.Functions), with the
// emulators and the queues at the container's host, and each secret by
// value beside its emptied NAME_ARN.
func TestVariables(t *testing.T) {
	tpl := localtest.Template(t)
	st := stack.State{
		DynamoDBEndpoint: "http://127.0.0.1:8000", SQSEndpoint: "http://127.0.0.1:9324", S3Endpoint: "http://127.0.0.1:4568",
		TableName: "payments-local", AuditTableName: "payments-local-audit", QueueURLs: map[string]string{}, BaseURL: "http://127.0.0.1:3000/api/v1",
		CognitoEndpoint: "http://127.0.0.1:9229", UserPoolID: "local_Ab12Cd34", UserPoolClientID: "dashboardclient",
	}
	for _, q := range tpl.Queues() {
		st.QueueURLs[q.Name] = "http://127.0.0.1:9324/000000000000/" + q.Name
	}
	secrets := map[string]string{}
	for name := range stack.SecretFiles {
		secrets[name] = "local-" + strings.ToLower(name)
	}
	const host = "host.docker.internal"
	vars, err := Variables(tpl, st, secrets, host)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf, vars); err != nil {
		t.Fatal(err)
	}
	var file map[string]map[string]string
	if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
		t.Fatalf("not SAM's format ({LogicalId: {VAR: value}}): %v", err)
	}
	if len(file) != len(tpl.Functions()) {
		t.Errorf("%d functions in the file, %d in template.yaml", len(file), len(tpl.Functions()))
	}
	for _, fn := range tpl.Functions() {
		env, ok := file[fn.LogicalID]
		if !ok {
			t.Errorf("%s: not in the file", fn.LogicalID)
			continue
		}
		for _, name := range function.Functions[fn.Dir].Variables() {
			if _, ok := env[name]; !ok {
				t.Errorf("%s: no %s", fn.LogicalID, name)
			}
			if plain, ok := strings.CutSuffix(name, "_ARN"); ok && secrets[plain] != "" {
				if env[name] != "" || env[plain] != secrets[plain] {
					t.Errorf("%s: %s=%q, %s=%q; want %s empty and %s the local value", fn.LogicalID, name, env[name], plain, env[plain], name, plain)
				}
			}
		}
		want := map[string]string{
			"AWS_ENDPOINT_URL_DYNAMODB":                  "http://" + host + ":8000",
			"AWS_ENDPOINT_URL_SQS":                       "http://" + host + ":9324",
			"AWS_ENDPOINT_URL_S3":                        "http://" + host + ":4568",
			"AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER": "http://" + host + ":9229",
			"AWS_REGION":                                 stack.Region,
			"STAGE":                                      "local",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s: %s=%q, want %q", fn.LogicalID, k, env[k], v)
			}
		}
		if _, ok := env["TABLE_NAME"]; ok && env["TABLE_NAME"] != "payments-local" {
			t.Errorf("%s: TABLE_NAME=%q, want make run's payments-local", fn.LogicalID, env["TABLE_NAME"])
		}
		if v, ok := env["TOKEN_ISSUER"]; ok && v != st.BaseURL {
			t.Errorf("%s: TOKEN_ISSUER=%q, want make run's %q, which its tokens name", fn.LogicalID, v, st.BaseURL)
		}
		for k, v := range env {
			if strings.Contains(v, "127.0.0.1") && k != "TOKEN_ISSUER" {
				t.Errorf("%s: %s=%q points at the container itself", fn.LogicalID, k, v)
			}
			if strings.HasSuffix(k, "_QUEUE_URL") && !strings.HasPrefix(v, "http://"+host+":9324/") {
				t.Errorf("%s: %s=%q, want a queue of make run's SQS emulator", fn.LogicalID, k, v)
			}
		}
	}
}

func TestRehost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://h:8000"},
		{"http://localhost:9324/000000000000/payouts", "http://h:9324/000000000000/payouts"},
		{"https://127.0.0.1", "https://h"},
		{"https://api.example.com/v1", "https://api.example.com/v1"},
		{"payments-local", "payments-local"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := rehost(tt.in, "h"); got != tt.want {
			t.Errorf("rehost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
