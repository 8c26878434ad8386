package repocheck_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"payments/infra/local/localtest"
)

// TestShellBlocksFollowMakeRun checks the shell blocks of the README and of
// docs/*.md, which a user pastes beside `make run`: they take its ports and
// its data folder from PORT, DOCS_PORT and DATA_DIR as make run does, so
// they work on a stack whose ports or data were moved. No line names
// 127.0.0.1 or localhost with a port of its own, nor a file under .cache/
// but through ${DATA_DIR:-.cache}; the walk-through derives its base URL
// and the sample documents' from the variables.
func TestShellBlocksFollowMakeRun(t *testing.T) {
	root := localtest.Root(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	hardCoded := regexp.MustCompile(`(127\.0\.0\.1|localhost):[0-9]|\.cache/`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, f)
		for _, l := range shellLines(string(b)) {
			if hardCoded.MatchString(l.text) {
				t.Errorf("%s:%d: a port or a .cache path of its own; use ${PORT:-3000}, ${DOCS_PORT:-4443}, ${DATA_DIR:-.cache} (or $BASE, $DOCS): %s", name, l.n, l.text)
			}
		}
	}

	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range shellLines(string(readme)) {
		lines[l.text] = true
	}
	for _, want := range []string{
		"BASE=http://127.0.0.1:${PORT:-3000}/api/v1",
		"DOCS=https://127.0.0.1:${DOCS_PORT:-4443}",
		`ADMIN="X-Admin-Key: $(cat ${DATA_DIR:-.cache}/admin-api-key)"`,
	} {
		if !lines[want] {
			t.Errorf("the README's walk-through has no line %s", want)
		}
	}
}

// line is a line of a Markdown file and its number.
type line struct {
	n    int
	text string
}

// shellLines returns the lines of the ```sh blocks of a Markdown text.
func shellLines(md string) []line {
	var out []line
	in := false
	for i, l := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "```"):
			in = false
		case in:
			out = append(out, line{i + 1, l})
		}
	}
	return out
}

// TestReadmeSandboxUsesNoProductionVariable checks the README's shell
// blocks in the order a user pastes them: a variable a block of the
// sandbox sections uses (`$NAME`, `${NAME…}`) was last set by a sandbox
// block, not by the production detour ("Production mode, locally"), which
// the README has the user run before the Webhooks section: its company,
// wallets and token are not the sandbox company's. A variable both set is
// set again by the sandbox section that uses it after the detour.
func TestReadmeSandboxUsesNoProductionVariable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(localtest.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const detour = "## Production mode, locally"
	assign := regexp.MustCompile(`^\s*([A-Z_][A-Z0-9_]*)=`)
	use := regexp.MustCompile(`\$\{?([A-Z_][A-Z0-9_]*)`)
	setBy := map[string]string{} // variable → the section that set it last
	section, in, seen := "", false, false
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.HasPrefix(l, "## "):
			section = l
			seen = seen || strings.HasPrefix(l, detour)
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
		case in && strings.HasPrefix(strings.TrimSpace(l), "```"):
			in = false
		case in:
			production := strings.HasPrefix(section, detour)
			for _, m := range use.FindAllStringSubmatch(l, -1) {
				if by := setBy[m[1]]; !production && strings.HasPrefix(by, detour) {
					t.Errorf("README.md:%d (%s): $%s was last set by the production detour, not by the sandbox session: %s", i+1, section, m[1], strings.TrimSpace(l))
				}
			}
			if m := assign.FindStringSubmatch(l); m != nil {
				setBy[m[1]] = section
			}
		}
	}
	if !seen {
		t.Fatalf("README.md: no section %q", detour)
	}
}
