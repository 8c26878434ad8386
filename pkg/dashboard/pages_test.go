package dashboard

import (
	"io/fs"
	"path"
	"strings"
	"testing"
)

// TestEveryPageParses parses each page over the layout, as its first
// rendering does, and checks the second asks for no parse.
func TestEveryPageParses(t *testing.T) {
	p, err := parsePages(loadAssets())
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	names := 0
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		names++
		first, err := p.page(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if first.Lookup("content") == nil {
			t.Errorf("%s defines no content", name)
		}
		if again, _ := p.page(name); again != first {
			t.Errorf("%s was parsed twice", name)
		}
	}
	if names == 0 || len(p.parsed) != names {
		t.Errorf("%d pages parsed of %d", len(p.parsed), names)
	}
	if _, err := p.page("no-such-page"); err == nil {
		t.Error("a page with no template parsed")
	}
}
