// Package deploychecktest is a contract fake of what the deploy-check
// function calls: CodeDeploy's GetDeployment and
// PutLifecycleEventHookExecutionStatus (JSON 1.1, X-Amz-Target
// CodeDeploy_20141006.*) and Lambda's Invoke (REST, POST
// /2015-03-31/functions/<name>/invocations?Qualifier=<version>), as their
// SDK clients send them and read the answers, on one server.
package deploychecktest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Answer is how a function's version answers an invocation.
type Answer struct {
	Payload       string // what the function returned, or its error
	FunctionError string // "Unhandled" for a function error, else ""
}

// Report is a status put for a deployment's lifecycle hook.
type Report struct {
	DeploymentID, HookID, Status string
}

// Fake serves CodeDeploy and Lambda.
type Fake struct {
	// Deployments maps a deployment id to its AppSpec content; GetDeployment
	// of another id fails with DeploymentDoesNotExistException.
	Deployments map[string]string
	// Versions maps "<function>:<version>" to its answer; Invoke of another
	// fails with ResourceNotFoundException.
	Versions map[string]Answer
	// RefuseReports makes PutLifecycleEventHookExecutionStatus fail.
	RefuseReports bool

	mu       sync.Mutex
	reports  []Report
	payloads []string
}

// Start serves f until the returned server is closed.
func (f *Fake) Start() *httptest.Server { return httptest.NewServer(f) }

// Reports returns the statuses put so far.
func (f *Fake) Reports() []Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Report(nil), f.reports...)
}

// Payloads returns the payloads of the invocations so far.
func (f *Fake) Payloads() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.payloads...)
}

// ServeHTTP answers a CodeDeploy or Lambda request.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		f.codeDeploy(w, r, target)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(name, "/invocations")
	if r.Method != http.MethodPost || !ok || !ok2 {
		lambdaError(w, http.StatusBadRequest, "InvalidRequestContentException", "not an Invoke: "+r.Method+" "+r.URL.Path)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		lambdaError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	f.mu.Lock()
	f.payloads = append(f.payloads, string(payload))
	f.mu.Unlock()
	version := r.URL.Query().Get("Qualifier")
	a, ok := f.Versions[name+":"+version]
	if !ok {
		lambdaError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name+":"+version)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amz-Executed-Version", version)
	if a.FunctionError != "" {
		w.Header().Set("X-Amz-Function-Error", a.FunctionError)
	}
	w.Write([]byte(a.Payload))
}

func (f *Fake) codeDeploy(w http.ResponseWriter, r *http.Request, target string) {
	var in struct {
		DeploymentID string `json:"deploymentId"`
		HookID       string `json:"lifecycleEventHookExecutionId"`
		Status       string `json:"status"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.Header.Get("Content-Type") != "application/x-amz-json-1.1" {
		codeDeployError(w, "ValidationException", fmt.Sprintf("not a JSON 1.1 request: %v", err))
		return
	}
	switch target {
	case "CodeDeploy_20141006.GetDeployment":
		content, ok := f.Deployments[in.DeploymentID]
		if !ok {
			codeDeployError(w, "DeploymentDoesNotExistException", "The deployment "+in.DeploymentID+" could not be found.")
			return
		}
		writeJSON(w, map[string]any{"deploymentInfo": map[string]any{
			"deploymentId": in.DeploymentID, "computePlatform": "Lambda", "status": "InProgress",
			"revision": map[string]any{"revisionType": "AppSpecContent", "appSpecContent": map[string]string{"content": content}},
		}})
	case "CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus":
		if f.RefuseReports {
			codeDeployError(w, "LifecycleEventAlreadyCompletedException", "The lifecycle event is already completed.")
			return
		}
		if in.Status != "Succeeded" && in.Status != "Failed" {
			codeDeployError(w, "InvalidLifecycleEventHookExecutionStatusException", "status "+in.Status)
			return
		}
		f.mu.Lock()
		f.reports = append(f.reports, Report{in.DeploymentID, in.HookID, in.Status})
		f.mu.Unlock()
		writeJSON(w, map[string]string{"lifecycleEventHookExecutionId": in.HookID})
	default:
		codeDeployError(w, "UnknownOperationException", target)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(v)
}

func codeDeployError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

func lambdaError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": msg})
}

// SampleDeployment is the deployment of events/deploy-check: the auth
// function's move from version 1 to 2.
const (
	SampleDeployment = "d-SAMPLE0001"
	SampleFunction   = "payments-local-AuthFunction-SAMPLE"
)

// Sample returns a fake that holds SampleDeployment, whose target version
// answers the health check "ok", for the sample event's runs
// (infra/local's tests).
func Sample() *Fake {
	return &Fake{
		Deployments: map[string]string{SampleDeployment: `{"version":0.0,"Resources":[{"AuthFunction":{"Type":"AWS::Lambda::Function",` +
			`"Properties":{"Name":"` + SampleFunction + `","Alias":"live","CurrentVersion":"1","TargetVersion":"2"}}}]}`},
		Versions: map[string]Answer{SampleFunction + ":2": {Payload: `{"status":"ok","function":"auth"}`}},
	}
}
