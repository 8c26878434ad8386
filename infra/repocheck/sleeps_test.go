package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"payments/infra/local/localtest"
)

// maxTestSleep is the longest time.Sleep a test may make: enough to pace a
// polling loop, too short to stand for "long enough for something to
// happen".
const maxTestSleep = 500 * time.Millisecond

// TestNoLongSleepsInTests reads every _test.go file of the repository, and
// every file of a test-support package (a folder whose name ends in
// "test": storetest, apptest…), and fails on a time.Sleep of a constant maxTestSleep or longer: a test that
// sleeps to let time pass is slow, and flaky when the machine is slower.
// Wait on a condition (waittest.Until) or inject a clock instead.
func TestNoLongSleepsInTests(t *testing.T) {
	root := localtest.Root(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(filepath.Base(filepath.Dir(path)), "test") {
			return nil // neither a test nor a test-support package (storetest, apptest…)
		}
		files++
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isTimeSelector(call.Fun, "Sleep") || len(call.Args) != 1 {
				return true
			}
			if d, ok := constDuration(call.Args[0]); ok && d >= maxTestSleep {
				rel, _ := filepath.Rel(root, fset.Position(call.Pos()).Filename)
				t.Errorf("%s:%d: time.Sleep(%v): wait on a condition (waittest.Until) or inject a clock", rel, fset.Position(call.Pos()).Line, d)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("found no _test.go file")
	}
}

// isTimeSelector reports whether e is time.<name>.
func isTimeSelector(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "time"
}

// units are the duration constants of package time.
var units = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

// constDuration evaluates a constant duration written with integer
// literals, time's units, * and parentheses (6 * time.Second); ok is false
// for anything else.
func constDuration(e ast.Expr) (time.Duration, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return 0, false
		}
		n, err := strconv.ParseInt(e.Value, 0, 64)
		return time.Duration(n), err == nil
	case *ast.SelectorExpr:
		for name, d := range units {
			if isTimeSelector(e, name) {
				return d, true
			}
		}
	case *ast.ParenExpr:
		return constDuration(e.X)
	case *ast.BinaryExpr:
		x, okx := constDuration(e.X)
		y, oky := constDuration(e.Y)
		if okx && oky && e.Op == token.MUL {
			return x * y, true
		}
	}
	return 0, false
}
