package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"payments/infra/local/localtest"
	"payments/pkg/app"
)

// TestRegistryHasEveryFunction walks functions/ as a new function's author
// would leave it: each function is in exactly one of the registry's maps
// (what the dev server, make invoke and the tests run) and has sample
// events with their expected answers under events/<name>/ (make invoke,
// and the sample events' test).
func TestRegistryHasEveryFunction(t *testing.T) {
	root := localtest.Root(t)
	dirs, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	registered := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		name := d.Name()
		in := 0
		for _, ok := range []bool{has(app.HTTPFunctions, name), has(app.SQSFunctions, name), has(app.ScheduleFunctions, name), has(app.HookFunctions, name)} {
			if ok {
				in++
			}
		}
		if in != 1 {
			t.Errorf("functions/%s is in %d of pkg/app's maps, want 1", name, in)
		}
		if fn, ok := app.HTTPFunctions[name]; ok && fn.New == nil {
			t.Errorf("functions/%s: its entry in app.HTTPFunctions has no constructor", name)
		}
		registered += in
		if _, err := os.Stat(filepath.Join(root, "events", name, "expected.json")); err != nil {
			t.Errorf("functions/%s has no sample events: %v", name, err)
		}
	}
	if all := len(app.HTTPFunctions) + len(app.SQSFunctions) + len(app.ScheduleFunctions) + len(app.HookFunctions); all != registered {
		t.Errorf("pkg/app registers %d functions, functions/ has %d of them", all, registered)
	}
}

func has[F any](m map[string]F, name string) bool {
	_, ok := m[name]
	return ok
}
