package function

// The checks of a configuration that hold across settings: what production
// mode needs of the providers, and what a deployed production stack
// refuses.

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"payments/pkg/outbound"
)

// SecretPlaceholder is the value the stack gives the operator's
// API token secret, and the card issuer's API key secret, until DevOps put
// the provider's credential in it: a production function refuses to start
// with it.
const SecretPlaceholder = "unset"

// checkOperator checks, in production mode, the aggregator's settings fn
// reads: its base URL an absolute http(s) URL, its callback key set.
func (c Config) checkOperator(fn Function) error {
	if c.Mode != ModeProduction {
		return nil
	}
	vars := fn.Variables()
	if slices.Contains(vars, "OPERATOR_BASE_URL") {
		u, err := url.Parse(c.OperatorBaseURL)
		if c.OperatorBaseURL == "" {
			return fmt.Errorf("%w: OPERATOR_BASE_URL is not set (MODE %s needs the aggregator's API)", ErrConfig, c.Mode)
		}
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: OPERATOR_BASE_URL must be an http(s) URL, not %q", ErrConfig, c.OperatorBaseURL)
		}
	}
	if slices.Contains(vars, "OPERATOR_CALLBACK_PUBLIC_KEY") && c.OperatorCallbackKey == "" {
		return fmt.Errorf("%w: OPERATOR_CALLBACK_PUBLIC_KEY is not set (MODE %s verifies the aggregator's callbacks with it)", ErrConfig, c.Mode)
	}
	return nil
}

// LocalStage is the stage of the local stack (make run, make invoke and
// the tests' stacks), which passes STAGE=local: no deployment is named so
// (the template's Stage is dev, staging or prod).
const LocalStage = "local"

// Deployed reports whether c is the configuration of a deployed stack: its
// STAGE is set and is not LocalStage. A function without STAGE (a test's
// configuration) is not deployed.
func (c Config) Deployed() bool { return c.Stage != "" && c.Stage != LocalStage }

// ProviderURLs are the settings naming a provider's API, which a deployed
// production stage requires to be https (the local stack's simulated
// providers answer on http://127.0.0.1).
var ProviderURLs = []string{"OPERATOR_BASE_URL", "ISSUER_BASE_URL"}

// checkDeployedProduction refuses, in a deployed stack (Deployed) in
// production mode, what only the local stack may do: a provider URL that
// is not https, loopback receivers allowed (OUTBOUND_ALLOW_LOOPBACK), a
// secret given in the environment itself (PlainSecrets) and no alarm
// e-mail. Each refusal names the setting. It reads the process
// environment, whatever the function uses, so that no function of such a
// stack starts with one of them set.
func (c Config) checkDeployedProduction() error {
	if !c.Deployed() || c.Mode != ModeProduction {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%w: stage %s in %s mode: "+format, append([]any{ErrConfig, c.Stage, c.Mode}, args...)...)
	}
	for _, name := range ProviderURLs {
		if v := os.Getenv(name); v != "" && !strings.HasPrefix(strings.ToLower(v), "https://") {
			return refuse("%s must be an https URL, not %q", name, v)
		}
	}
	if outbound.AllowLoopbackFromEnv() {
		return refuse("%s must not be set (loopback receivers are the local stack's)", outbound.AllowLoopbackEnv)
	}
	for _, name := range PlainSecrets {
		if os.Getenv(name) != "" {
			return refuse("%s must not be set: a deployed stack reads the secret from %s_ARN", name, name)
		}
	}
	if c.AlarmEmail == "" {
		return refuse("ALARM_EMAIL is not set (the AlarmEmail parameter: a production stage's alarms must reach someone)")
	}
	return nil
}
