// Package apiclient is a Go client of the API, generated from
// docs/openapi.yaml by oapi-codegen (`make generate`; client.gen.go is not
// edited by hand). Its end-to-end test runs the README's walk-through
// against a local stack.
package apiclient

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../docs/openapi.yaml
