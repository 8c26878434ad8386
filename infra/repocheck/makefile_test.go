package repocheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestMakeLintNeedsCfnLint runs the cfn-lint step of `make lint` with a
// PATH that holds only bash and make: it fails with the command to install
// cfn-lint.
func TestMakeLintNeedsCfnLint(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"bash", "make"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(bin, "make"), "-s", "cfn-lint")
	cmd.Dir = localtest.Root(t)
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make cfn-lint passed without cfn-lint: %s", out)
	}
	if want := "make lint: cfn-lint is not installed: pip install cfn-lint"; !strings.Contains(string(out), want) {
		t.Fatalf("output %q, want %q", out, want)
	}
}
