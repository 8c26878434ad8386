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

// TestMakeTargetsDocumented checks the targets `make help` lists (each
// Makefile target with a "## " description) against the README's "Make
// targets" table and docs/local.md's "Commands" table: each target is a
// row of both, and each row of either is a target make help lists
// (build-% as `make build-<LogicalId>`).
func TestMakeTargetsDocumented(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed: every target this checks is run with it")
	}
	root := localtest.Root(t)
	cmd := exec.Command("make", "-s", "--no-print-directory", "help")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			listed[strings.Replace(f[0], "%", "<LogicalId>", 1)] = true
		}
	}
	if !listed["help"] || !listed["run"] {
		t.Fatalf("make help listed %v: not the targets", listed)
	}
	for _, doc := range []struct{ file, section string }{
		{"README.md", "## Make targets"},
		{filepath.Join("docs", "local.md"), "## Commands"},
	} {
		b, err := os.ReadFile(filepath.Join(root, doc.file))
		if err != nil {
			t.Fatal(err)
		}
		rows := makeRows(string(b), doc.section)
		if len(rows) == 0 {
			t.Errorf("%s: no table of make targets under %q", doc.file, doc.section)
			continue
		}
		for target := range listed {
			if !rows[target] {
				t.Errorf("%s, %q: no row for `make %s`, which make help lists", doc.file, doc.section, target)
			}
		}
		for target := range rows {
			if !listed[target] {
				t.Errorf("%s, %q: a row for `make %s`, which make help does not list", doc.file, doc.section, target)
			}
		}
	}
}

// makeRows returns the targets of the rows "| `make <target> …` |" of the
// first table under the heading section of a Markdown text.
func makeRows(md, section string) map[string]bool {
	rows := map[string]bool{}
	_, after, ok := strings.Cut(md, "\n"+section+"\n")
	if !ok {
		return rows
	}
	inTable := false
	for _, l := range strings.Split(after, "\n") {
		switch {
		case strings.HasPrefix(l, "|"):
			inTable = true
			if target, ok := strings.CutPrefix(l, "| `make "); ok {
				rows[strings.FieldsFunc(target, func(r rune) bool { return r == ' ' || r == '`' })[0]] = true
			}
		case inTable || strings.HasPrefix(l, "#"):
			return rows
		}
	}
	return rows
}
