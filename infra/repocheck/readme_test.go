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
