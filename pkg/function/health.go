package function

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

// HealthCheckEvent is the payload that asks a function whether it started:
// a top-level key that no event of API Gateway, SQS, EventBridge or
// CodeDeploy has. Start answers it with Health, without calling the
// function's handler; reaching that answer proves the function read its
// configuration and secrets and built its handler, since Start exits
// otherwise. The deploy-check function sends it to a version about to take
// traffic (docs/architecture.md, "Deployments").
const HealthCheckEvent = `{"health_check":{}}`

// HealthOK is Health.Status of a function that started.
const HealthOK = "ok"

// Health is a function's answer to HealthCheckEvent.
type Health struct {
	Status   string `json:"status"`   // HealthOK
	Function string `json:"function"` // its folder name under functions/
}

// HealthChecked returns h answering HealthCheckEvent, with Health naming
// function, and every other payload unchanged.
func HealthChecked(function string, h lambda.Handler) lambda.Handler {
	answer, err := json.Marshal(Health{Status: HealthOK, Function: function})
	if err != nil {
		panic(err) // two strings always marshal
	}
	return healthChecked{answer: answer, next: h}
}

type healthChecked struct {
	answer []byte
	next   lambda.Handler
}

// healthKey is the key of HealthCheckEvent, looked for before the payload
// is decoded: an event that does not hold it is not decoded twice.
var healthKey = []byte(`"health_check"`)

func (h healthChecked) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if bytes.Contains(payload, healthKey) && isHealthCheck(payload) {
		return h.answer, nil
	}
	return h.next.Invoke(ctx, payload)
}

// isHealthCheck reports whether payload is a JSON object whose only key is
// health_check.
func isHealthCheck(payload []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil || len(m) != 1 {
		return false
	}
	_, ok := m["health_check"]
	return ok
}
