package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"payments/infra/local/localtest"
	"payments/pkg/store/schema"
)

// schemaDir is the package that spells the table's keys (docs/architecture.md,
// "The store"): every other Go file builds them with its functions.
const schemaDir = "pkg/store/schema"

// keyPrefix matches the key prefix a string literal of the schema declares:
// upper-case words, each ended by '#' ("COMPANY#", "SANDBOX#ISSUER#CARD#").
var keyPrefix = regexp.MustCompile(`^[A-Z][A-Z0-9_]*#(?:[A-Z][A-Z0-9_]*#)*$`)

// TestKeysSpelledInSchema reads the key prefixes pkg/store/schema declares
// (each string literal of its non-test files, up to its last '#', and the
// "<index>#" of each of its …Index constants, the shards' partitions) and fails
// on each string literal of any other Go file of the repository, tests
// included, that holds one: a key is built with the schema's functions
// (schema.CompanyPK(id), schema.WalletSK(id) …), never spelled by hand.
func TestKeysSpelledInSchema(t *testing.T) {
	root := localtest.Root(t)
	prefixes := schemaPrefixes(t, filepath.Join(root, filepath.FromSlash(schemaDir)))
	for _, want := range []string{schema.CompanyPK(""), schema.LedgerSKPrefix, schema.SandboxIssuerPrefix, schema.SandboxKYCPK("")} {
		if !slices.Contains(prefixes, want) {
			t.Fatalf("the schema's prefixes %v miss %s: the reading of pkg/store/schema is broken", prefixes, want)
		}
	}
	t.Logf("the schema's key prefixes: %v", prefixes)
	// The longest first, so that a literal is reported with the prefix it
	// spells in whole (SANDBOX#ISSUER#CARD#, not CARD#).
	slices.SortStableFunc(prefixes, func(a, b string) int { return len(b) - len(a) })
	files := 0
	walkGoFiles(t, root, func(rel string, fset *token.FileSet, f *ast.File) {
		if strings.HasPrefix(rel, schemaDir+"/") {
			return
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, p := range prefixes {
				if strings.Contains(s, p) {
					t.Errorf("%s:%d: %s spells the key prefix %s: build the key with pkg/store/schema", rel, fset.Position(lit.Pos()).Line, lit.Value, p)
					break
				}
			}
			return true
		})
	})
	if files < 100 {
		t.Fatalf("read %d Go files: the walk missed the repository", files)
	}
}

// schemaPrefixes returns the key prefixes the non-test files of the schema
// package at dir spell: each string literal up to its last '#', without a
// leading '#' (the "#WALLET#" of a GSI partition), when that is a key
// prefix.
func schemaPrefixes(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(pkgs) == 0 {
		t.Fatalf("no Go file in %s: %v", dir, err)
	}
	var out []string
	for _, path := range pkgs {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		add := func(p string) {
			if keyPrefix.MatchString(p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				// A sharded index's partitions are "<index>#<nn>".
				for i, name := range n.Names {
					if lit, ok := valueAt(n, i).(*ast.BasicLit); ok && strings.HasSuffix(name.Name, "Index") && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							add(s + "#")
						}
					}
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					add(strings.TrimLeft(s[:strings.LastIndex(s, "#")+1], "#"))
				}
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

// valueAt returns the value of the i-th name of a value spec, nil when it
// has none.
func valueAt(v *ast.ValueSpec, i int) ast.Expr {
	if i < len(v.Values) {
		return v.Values[i]
	}
	return nil
}

// walkGoFiles parses every Go file of the repository, tests included,
// skipping hidden folders (.cache, .git), node_modules and bin, and calls
// visit with its path relative to root (with slashes).
func walkGoFiles(t *testing.T, root string, visit func(rel string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
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
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		visit(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
