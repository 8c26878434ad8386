package e2e_test

import (
	"context"
	"strings"
	"testing"

	"payments/infra/local/samtemplate"
	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/httpapi"
)

// routeFunctions maps each route of template.yaml ("GET /cards/{id}", as
// the API document names it) to the folder of the function that serves
// it.
func routeFunctions(t testing.TB) map[string]string {
	t.Helper()
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, fn := range tpl.Functions() {
		for _, r := range fn.Routes {
			if r.Path != "$default" {
				out[r.Method+" "+strings.TrimPrefix(r.Path, httpapi.BasePath)] = fn.Dir
			}
		}
	}
	return out
}

// templateHandlers builds, on cfg, the function template.yaml wires to
// each route: its map from a route (as routeFunctions names it) to the
// function's handler. Each function is built once, by its constructor in
// app.HTTPFunctions over caches, unless built holds it already (by folder).
func templateHandlers(t testing.TB, cfg function.Config, caches base.Caches, built map[string]function.HTTPHandler) map[string]function.HTTPHandler {
	t.Helper()
	byDir := map[string]function.HTTPHandler{}
	for dir, h := range built {
		byDir[dir] = h
	}
	out := map[string]function.HTTPHandler{}
	for route, dir := range routeFunctions(t) {
		h, ok := byDir[dir]
		if !ok {
			httpFn, known := app.HTTPFunctions[dir]
			if !known {
				t.Fatalf("%s: functions/%s has no constructor in app.HTTPFunctions", route, dir)
			}
			var err error
			if h, err = httpFn.New(context.Background(), apptest.Recording(cfg, dir), caches); err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			byDir[dir] = h
		}
		out[route] = h
	}
	return out
}
