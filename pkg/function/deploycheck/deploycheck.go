// Package deploycheck is the deploy-check function: CodeDeploy's
// BeforeAllowTraffic hook of every function deployed with a
// DeploymentPreference. Before any traffic moves to a new version, it asks
// that version for its health (function.HealthCheckEvent), which only a
// version that read its configuration and secrets and built its handler
// answers, and reports Succeeded or Failed to CodeDeploy, which goes on
// shifting traffic or rolls back (docs/architecture.md, "Deployments").
package deploycheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/codedeploy"
	cdtypes "github.com/aws/aws-sdk-go-v2/service/codedeploy/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"gopkg.in/yaml.v3"

	"payments/pkg/function"
)

// New builds the deploy-check function over the CodeDeploy and Lambda
// clients of cfg (Config.CodeDeployEndpoint and Config.LambdaEndpoint
// point them at stand-ins in tests).
func New(ctx context.Context, cfg function.Config) (function.DeployHookHandler, error) {
	h := &Hook{
		Deployments: codedeploy.NewFromConfig(cfg.AWS, func(o *codedeploy.Options) {
			if cfg.CodeDeployEndpoint != "" {
				o.BaseEndpoint = aws.String(cfg.CodeDeployEndpoint)
			}
		}),
		Functions: lambda.NewFromConfig(cfg.AWS, func(o *lambda.Options) {
			if cfg.LambdaEndpoint != "" {
				o.BaseEndpoint = aws.String(cfg.LambdaEndpoint)
			}
		}),
	}
	return h.Handle, nil
}

// Hook checks the versions a deployment is about to send traffic to.
type Hook struct {
	Deployments *codedeploy.Client
	Functions   *lambda.Client
}

// Target is a function a deployment moves from CurrentVersion to
// TargetVersion: one resource of its AppSpec.
type Target struct {
	Name, Alias, CurrentVersion, TargetVersion string
}

// Handle checks the deployment of ev and reports the hook's status to
// CodeDeploy: Succeeded when every target version answers the health
// check, Failed otherwise (the deployment unreadable, a version that does
// not answer, answers with a function error or not "ok"). It returns an
// error only when the status could not be reported; CodeDeploy then fails
// the hook when it times out.
func (h *Hook) Handle(ctx context.Context, ev function.DeployHookEvent) error {
	status := cdtypes.LifecycleEventStatusSucceeded
	if err := h.check(ctx, ev.DeploymentID); err != nil {
		status = cdtypes.LifecycleEventStatusFailed
		slog.ErrorContext(ctx, "deploy-check failed", "deployment", ev.DeploymentID, "error", err)
	}
	_, err := h.Deployments.PutLifecycleEventHookExecutionStatus(ctx, &codedeploy.PutLifecycleEventHookExecutionStatusInput{
		DeploymentId:                  aws.String(ev.DeploymentID),
		LifecycleEventHookExecutionId: aws.String(ev.LifecycleEventHookExecutionID),
		Status:                        status,
	})
	if err != nil {
		return fmt.Errorf("deploy-check: report %s for deployment %s: %w", status, ev.DeploymentID, err)
	}
	slog.InfoContext(ctx, "deploy-check reported", "deployment", ev.DeploymentID, "status", status)
	return nil
}

// check returns nil when every target of the deployment is healthy.
func (h *Hook) check(ctx context.Context, deploymentID string) error {
	out, err := h.Deployments.GetDeployment(ctx, &codedeploy.GetDeploymentInput{DeploymentId: aws.String(deploymentID)})
	if err != nil {
		return fmt.Errorf("read the deployment: %w", err)
	}
	targets, err := Targets(out.DeploymentInfo)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := h.health(ctx, t); err != nil {
			return fmt.Errorf("%s version %s: %w", t.Name, t.TargetVersion, err)
		}
		slog.InfoContext(ctx, "version healthy", "function", t.Name, "version", t.TargetVersion)
	}
	return nil
}

// health invokes t's target version with the health check.
func (h *Hook) health(ctx context.Context, t Target) error {
	out, err := h.Functions.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(t.Name),
		Qualifier:    aws.String(t.TargetVersion),
		Payload:      []byte(function.HealthCheckEvent),
	})
	if err != nil {
		return fmt.Errorf("invoke: %w", err)
	}
	if out.FunctionError != nil {
		return fmt.Errorf("function error %s: %.200s", *out.FunctionError, out.Payload)
	}
	var health function.Health
	if err := json.Unmarshal(out.Payload, &health); err != nil || health.Status != function.HealthOK {
		return fmt.Errorf("answered %.200q, not a health of status %q", out.Payload, function.HealthOK)
	}
	return nil
}

// ErrAppSpec reports a deployment whose AppSpec names no Lambda function to
// check.
var ErrAppSpec = errors.New("deploy-check: AppSpec")

// Targets returns the functions of a Lambda deployment: the resources of
// its AppSpec (revision.appSpecContent.content; the String revision type
// is deprecated), YAML or JSON, of type AWS::Lambda::Function. Keys are matched in any case
// ("TargetVersion" or "targetversion").
func Targets(d *cdtypes.DeploymentInfo) ([]Target, error) {
	var content string
	if d != nil && d.Revision != nil && d.Revision.AppSpecContent != nil {
		content = aws.ToString(d.Revision.AppSpecContent.Content)
	}
	if content == "" {
		return nil, fmt.Errorf("%w: the deployment has no AppSpec content", ErrAppSpec)
	}
	// YAML holds JSON; JSON's decoding matches keys in any case.
	var doc any
	if err := yaml.Unmarshal([]byte(content), &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAppSpec, err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAppSpec, err)
	}
	var spec struct {
		Resources []map[string]struct {
			Type       string
			Properties Target
		}
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAppSpec, err)
	}
	var targets []Target
	for _, res := range spec.Resources {
		for _, r := range res {
			if r.Type != "AWS::Lambda::Function" {
				continue
			}
			if r.Properties.Name == "" || r.Properties.TargetVersion == "" {
				return nil, fmt.Errorf("%w: a function without Name or TargetVersion", ErrAppSpec)
			}
			targets = append(targets, r.Properties)
		}
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("%w: no resource of type AWS::Lambda::Function", ErrAppSpec)
	}
	return targets, nil
}
