package main

import (
	"maps"
	"testing"

	"payments/infra/local/samtemplate"
)

// TestStackParams: every variable `make run` reads for a stack parameter
// names a parameter of the template, and sets it when given.
func TestStackParams(t *testing.T) {
	tpl, err := samtemplate.Load("../../../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for variable, param := range paramVariables {
		if _, ok := tpl.Parameters[param]; !ok {
			t.Errorf("%s sets %s, which template.yaml does not declare", variable, param)
		}
	}
	env := map[string]string{"PAYMENT_DEADLINE_SECONDS": "20", "MODE": "production", "PORT": "3001"}
	got := stackParams(func(k string) string { return env[k] })
	want := map[string]string{"PaymentDeadlineSeconds": "20", "Mode": "production"}
	if !maps.Equal(got, want) {
		t.Fatalf("stackParams = %v, want %v", got, want)
	}
}
