package deploycheck_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/deploycheck"
	"payments/pkg/function/deploycheck/deploychecktest"
)

const (
	deploymentID = "d-ABCDEF123"
	hookID       = "hook-execution-1"
	authFunction = "payments-test-AuthFunction-AbC123"
)

// appSpec is the AppSpec of a deployment of the auth function from
// version 6 to 7, as SAM's deployments write it (JSON).
const appSpec = `{"version":0.0,"Resources":[{"AuthFunction":{"Type":"AWS::Lambda::Function","Properties":{"Name":"` + authFunction +
	`","Alias":"live","CurrentVersion":"6","TargetVersion":"7"}}}],"Hooks":[{"BeforeAllowTraffic":"CodeDeployHook_payments-test-deploy-check"}]}`

// newHook builds the deploy-check function as its main does, against f,
// its AWS calls recorded.
func newHook(t *testing.T, f *deploychecktest.Fake) function.DeployHookHandler {
	t.Helper()
	srv := f.Start()
	t.Cleanup(srv.Close)
	cfg := function.Config{
		CodeDeployEndpoint: srv.URL, LambdaEndpoint: srv.URL,
		AWS: aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
	}
	names := map[string]string{deploymentID: "@deployment-groups", "d-GONE": "@deployment-groups", authFunction: "@functions"}
	cfg.AWS.APIOptions = append(cfg.AWS.APIOptions, apptest.RecordCalls("deploy-check", names))
	h, err := deploycheck.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestDeployCheck runs the hook against the fake CodeDeploy and Lambda: it
// reports Succeeded only when the target version answers the health check
// "ok", Failed for anything else, and fails itself only when it cannot
// report.
func TestDeployCheck(t *testing.T) {
	healthy := deploychecktest.Answer{Payload: `{"status":"ok","function":"auth"}`}
	tests := []struct {
		name       string
		deployment string
		answer     deploychecktest.Answer
		refuse     bool
		status     string // reported; "" for none
		wantErr    bool
	}{
		{"healthy", deploymentID, healthy, false, "Succeeded", false},
		{"function error", deploymentID, deploychecktest.Answer{Payload: `{"errorMessage":"read configuration","errorType":"Runtime.ExitError"}`, FunctionError: "Unhandled"}, false, "Failed", false},
		{"answer not ok", deploymentID, deploychecktest.Answer{Payload: `{"status":"starting","function":"auth"}`}, false, "Failed", false},
		{"answer not a health", deploymentID, deploychecktest.Answer{Payload: `{"statusCode":400}`}, false, "Failed", false},
		{"no such version", deploymentID, deploychecktest.Answer{}, false, "Failed", false},
		{"deployment unreadable", "d-GONE", healthy, false, "Failed", false},
		{"report refused", deploymentID, healthy, true, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &deploychecktest.Fake{
				Deployments:   map[string]string{deploymentID: appSpec},
				Versions:      map[string]deploychecktest.Answer{authFunction + ":7": tt.answer, authFunction + ":6": healthy},
				RefuseReports: tt.refuse,
			}
			if tt.name == "no such version" {
				delete(f.Versions, authFunction+":7")
			}
			err := newHook(t, f)(context.Background(), function.DeployHookEvent{DeploymentID: tt.deployment, LifecycleEventHookExecutionID: hookID})
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			var want []deploychecktest.Report
			if tt.status != "" {
				want = []deploychecktest.Report{{DeploymentID: tt.deployment, HookID: hookID, Status: tt.status}}
			}
			if got := f.Reports(); !slices.Equal(got, want) {
				t.Errorf("reported %+v, want %+v", got, want)
			}
			for _, p := range f.Payloads() {
				if p != function.HealthCheckEvent {
					t.Errorf("invoked with %s, not the health check", p)
				}
			}
			if tt.deployment == deploymentID && len(f.Payloads()) != 1 {
				t.Errorf("%d invocations, want 1 (the target version)", len(f.Payloads()))
			}
		})
	}
}

// TestTargets reads the functions of an AppSpec, JSON or YAML, in the key
// case of either SAM or the CodeDeploy documentation; a deployment without
// one is ErrAppSpec.
func TestTargets(t *testing.T) {
	auth := deploycheck.Target{Name: authFunction, Alias: "live", CurrentVersion: "6", TargetVersion: "7"}
	yamlSpec := "version: 0.0\nresources:\n  - auth:\n      type: AWS::Lambda::Function\n      properties:\n        name: " + authFunction +
		"\n        alias: live\n        currentversion: \"6\"\n        targetversion: \"7\"\nhooks:\n  - beforeallowtraffic: check\n"
	tests := []struct {
		name string
		info *cdtypes.DeploymentInfo
		want []deploycheck.Target
	}{
		{"JSON", revision(appSpec), []deploycheck.Target{auth}},
		{"YAML", revision(yamlSpec), []deploycheck.Target{auth}},
		{"no revision", &cdtypes.DeploymentInfo{}, nil},
		{"no deployment", nil, nil},
		{"no function", revision(`{"Resources":[{"x":{"Type":"AWS::ECS::Service"}}]}`), nil},
		{"no target version", revision(`{"Resources":[{"x":{"Type":"AWS::Lambda::Function","Properties":{"Name":"f"}}}]}`), nil},
		{"not YAML", revision("resources: ["), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := deploycheck.Targets(tt.info)
			if tt.want == nil {
				if !errors.Is(err, deploycheck.ErrAppSpec) || !strings.HasPrefix(err.Error(), "deploy-check: AppSpec: ") {
					t.Fatalf("targets %+v, error %v; want ErrAppSpec", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("targets %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// revision is a deployment whose revision holds content, as an
// AppSpecContent.
func revision(content string) *cdtypes.DeploymentInfo {
	return &cdtypes.DeploymentInfo{Revision: &cdtypes.RevisionLocation{RevisionType: cdtypes.RevisionLocationTypeAppSpecContent, AppSpecContent: &cdtypes.AppSpecContent{Content: aws.String(content)}}}
}
