package repocheck_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/localtest"
	"payments/pkg/app"
	"payments/pkg/function/base"
)

// TestSweeperStepsDocumented runs the sweeper once, built as make run
// builds it, over a fresh table, and reads the names of the steps its
// answer reports. The README's routes table names each of them, and no
// other, in the sweeper's row, and counts them in words ("eight steps");
// docs/local.md's sample of its answer (make invoke's) has the same names.
func TestSweeperStepsDocumented(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	sweeper, err := app.ScheduleFunctions["sweeper"](context.Background(), localtest.FunctionConfig(t, tpl, res, "sweeper"), base.NewCaches(time.Now))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := sweeper(context.Background(), events.EventBridgeEvent{ID: "repocheck"})
	if err != nil {
		t.Fatal(err)
	}
	steps := keys(t, resp)
	if len(steps) < 2 {
		t.Fatalf("the sweeper answered %v: not its steps", resp)
	}
	root := localtest.Root(t)

	readme := read(t, root, "README.md")
	row := ""
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "| `sweeper` |") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("README.md: no row for the sweeper in the routes table")
	}
	var named []string
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(row, -1) {
		if m[1] != "sweeper" {
			named = append(named, m[1])
		}
	}
	slices.Sort(named)
	if !slices.Equal(named, steps) {
		t.Errorf("README.md's sweeper row names the steps %v; the sweeper answers %v", named, steps)
	}
	want := strings.Repeat("?", len(steps)) // no word: the row should say more than a number
	if len(steps) < len(numberWords) {
		want = numberWords[len(steps)]
	}
	if count := regexp.MustCompile(`([a-z]+) steps`).FindStringSubmatch(row); count == nil || count[1] != want {
		t.Errorf("README.md's sweeper row counts %q steps; the sweeper has %d (%q)", count, len(steps), want)
	}

	local := read(t, root, filepath.Join("docs", "local.md"))
	_, after, ok := strings.Cut(local, "`make invoke FN=sweeper EVENT=events/sweeper/scheduled.json` prints it,")
	sample := regexp.MustCompile("`(\\{[^`]*\\})`").FindStringSubmatch(after)
	if !ok || sample == nil {
		t.Fatal("docs/local.md: no sample of the sweeper's answer after make invoke's command")
	}
	var answer map[string]json.RawMessage
	if err := json.Unmarshal([]byte(sample[1]), &answer); err != nil {
		t.Fatalf("docs/local.md's sample of the sweeper's answer: %v", err)
	}
	if got := keys(t, answer); !slices.Equal(got, steps) {
		t.Errorf("docs/local.md's sample of the sweeper's answer has the steps %v; the sweeper answers %v", got, steps)
	}

	stepRow := regexp.MustCompile("^\\| `([a-z_]+)` \\|")
	var documented []string
	in := false
	for line := range strings.Lines(read(t, root, filepath.Join("docs", "operations.md"))) {
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line) == "## The sweeper"
		case in:
			if m := stepRow.FindStringSubmatch(line); m != nil {
				documented = append(documented, m[1])
			}
		}
	}
	slices.Sort(documented)
	if !slices.Equal(documented, steps) {
		t.Errorf("docs/operations.md's table of the sweeper (\"The sweeper\") lists %v; the sweeper answers %v", documented, steps)
	}
}

// numberWords spells the counts of steps a row may give.
var numberWords = []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}

// keys returns the keys of v's JSON object, sorted.
func keys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: not a JSON object: %v", b, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// read returns the file at root/name.
func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
