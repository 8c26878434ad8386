package local_test

import (
	"os/exec"
	"strings"
	"testing"

	"payments/infra/local/localtest"
)

// TestMakefileBuildTargets checks that `make build-<LogicalId>`, which
// `sam build` runs for each function (BuildMethod: makefile), finds the
// function's folder under functions/.
func TestMakefileBuildTargets(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root := localtest.Root(t)
	for _, fn := range localtest.Template(t).Functions() {
		t.Run(fn.LogicalID, func(t *testing.T) {
			cmd := exec.Command("make", "-s", "--no-print-directory", "function-dir-"+fn.LogicalID)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(out)); got != fn.Dir {
				t.Errorf("make build-%s would build functions/%s, want functions/%s (the CodeUri)", fn.LogicalID, got, fn.Dir)
			}
		})
	}
}
