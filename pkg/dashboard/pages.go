package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	template "github.com/DataDog/datadog-agent/pkg/template/html"

	"payments/pkg/sessions"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets/htmx.min.js assets/dashboard.css assets/copy.js
var assetFiles embed.FS

// pages are the templates, each page's parsed over the layout when it is
// first rendered: an execution environment parses only the pages it
// serves, and none before its first request.
type pages struct {
	layout *template.Template
	mu     sync.Mutex
	parsed map[string]*template.Template
}

// navigation is the main navigation's links, in order: Key is the view's
// Nav of the page the link leads to.
var navigation = []navLink{
	{"home", "Home", "/dashboard"},
	{"transactions", "Transactions", "/dashboard/transactions"},
	{"payouts", "Payouts", "/dashboard/payouts"},
	{"customers", "Customers", "/dashboard/customers"},
	{"cards", "Cards", "/dashboard/cards"},
	{"developers", "Developers", "/dashboard/developers"},
	{"team", "Team", "/dashboard/team"},
	{"activity", "Activity", "/dashboard/activity"},
}

// navLink is a link of the main navigation.
type navLink struct{ Key, Name, Path string }

// parsePages parses the layout and the parts pages share
// (templates/_<part>.html, each defining its template), with the asset
// function that names each asset by its versioned URL and the navigation.
// Each page, templates/<name>.html, is parsed over them by page.
func parsePages(a assets) (*pages, error) {
	funcs := template.FuncMap{"asset": a.url, "nav": func() []navLink { return navigation }, "shown": shown, "hours": hours,
		"sum": func(a, b int) int { return a + b }, "barWidth": func() int { return barWidth }, "has": slices.Contains[[]string]}
	layout, err := template.New("layout").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/_*.html")
	if err != nil {
		return nil, err
	}
	return &pages{layout: layout, parsed: map[string]*template.Template{}}, nil
}

// page returns page name, parsed over the layout the first time.
func (p *pages) page(name string) (*template.Template, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.parsed[name]; ok {
		return t, nil
	}
	t, err := p.layout.Clone()
	if err != nil {
		return nil, err
	}
	if t, err = t.ParseFS(templateFiles, "templates/"+name+".html"); err != nil {
		return nil, err
	}
	p.parsed[name] = t
	return t, nil
}

// view is what the layout renders: a page's title, its session (nil when
// signed out), the navigation entry it is, a message and the page's data.
type view struct {
	Title   string
	Session *sessions.Session
	Nav     string
	Error   string
	Notice  string
	Data    any
}

// render writes page name with v and status.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	if v.Session == nil {
		v.Session = sessionOf(r)
	}
	if v.Data == nil {
		v.Data = formData{}
	}
	t, err := h.pages.page(name)
	var b bytes.Buffer
	if err == nil {
		err = t.ExecuteTemplate(&b, "layout", v)
	}
	if err != nil {
		slog.ErrorContext(r.Context(), "dashboard: render", "page", name, "error", err)
		http.Error(w, "The page could not be shown.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// notFound answers the page of an id that is not one of the company's
// (another company's, or none): the same page either way.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.message(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
}

// when formats t for a person, in UTC.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// messageData is the message page's.
type messageData struct{ Text, Link, LinkText string }

// message renders a page of one sentence, with a link home (or to sign in).
func (h *Handler) message(w http.ResponseWriter, r *http.Request, status int, title, text string) {
	d := messageData{Text: text, Link: "/dashboard", LinkText: "Go to Home"}
	if sessionOf(r) == nil {
		if s, ok := h.current(r); ok {
			r = r.WithContext(contextWithSession(r, s))
		} else {
			d.Link, d.LinkText = "/dashboard/sign-in", "Go to sign in"
		}
	}
	h.render(w, r, status, "message", view{Title: title, Data: d})
}

// assets are the embedded files served under /dashboard/assets/<version>/,
// version being the start of the file's SHA-256: a changed file has a new
// URL, so each can be cached for a year.
type assets map[string]asset

type asset struct {
	body        []byte
	version     string
	contentType string
}

// loadAssets reads the embedded assets.
func loadAssets() assets {
	a := assets{}
	for name, typ := range map[string]string{"htmx.min.js": "text/javascript; charset=utf-8", "dashboard.css": "text/css; charset=utf-8",
		"copy.js": "text/javascript; charset=utf-8"} {
		b, err := assetFiles.ReadFile("assets/" + name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		sum := sha256.Sum256(b)
		a[name] = asset{body: b, version: hex.EncodeToString(sum[:6]), contentType: typ}
	}
	return a
}

// url returns the versioned URL of asset name.
func (a assets) url(name string) (string, error) {
	f, ok := a[name]
	if !ok {
		return "", fmt.Errorf("dashboard: no asset %q", name)
	}
	return "/dashboard/assets/" + f.version + "/" + name, nil
}

// serveAsset serves an asset of its current version, cached for a year.
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request) {
	f, ok := h.assets[r.PathValue("name")]
	if !ok || r.PathValue("version") != f.version || strings.Contains(r.PathValue("name"), "/") {
		h.message(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(f.body)
}
