package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRouterMiddleware: a middleware runs after the guard on the routes it
// takes, in the order added; its error is written through the catalogue;
// the routes it leaves (nil) are served as they are.
func TestRouterMiddleware(t *testing.T) {
	var trace []string
	guard := func(r *http.Request) (context.Context, error) {
		trace = append(trace, "guard")
		return WithCompany(r.Context(), "c1"), nil
	}
	named := func(name string) Middleware {
		return func(route Route, next http.Handler) HandlerFunc {
			if route.Pattern() != "POST /wrapped" {
				return nil
			}
			return func(w http.ResponseWriter, r *http.Request) error {
				trace = append(trace, name+" "+companyID(r.Context()))
				if r.Header.Get("X-Refuse") == name {
					return errThing
				}
				next.ServeHTTP(w, r)
				return nil
			}
		}
	}
	rt := NewRouter(testCatalogue, guard)
	rt.Use(named("outer"))
	rt.Use(named("inner"))
	handler := func(w http.ResponseWriter, r *http.Request) error {
		trace = append(trace, "handler")
		return errThing
	}
	rt.Handle("POST /wrapped", handler)
	rt.Handle("POST /plain", handler)
	tests := []struct {
		path, refuse, trace string
	}{
		{"/wrapped", "", "guard, outer c1, inner c1, handler"},
		{"/wrapped", "inner", "guard, outer c1, inner c1"},
		{"/plain", "", "guard, handler"},
	}
	for _, tt := range tests {
		trace = nil
		r := httptest.NewRequest("POST", BasePath+tt.path, nil)
		r.Header.Set("X-Refuse", tt.refuse)
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		if got := strings.Join(trace, ", "); got != tt.trace {
			t.Errorf("%s refused by %q: %s, want %s", tt.path, tt.refuse, got, tt.trace)
		}
		if w.Code != http.StatusNotFound || w.Header().Get("Retry-After") != "3" || !strings.Contains(w.Body.String(), "THING_NOT_FOUND") {
			t.Errorf("%s: %d %v %s", tt.path, w.Code, w.Header(), w.Body)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Use after Handle did not panic")
		}
	}()
	rt.Use(named("late"))
}

// TestRouteDeclarations: what a route declares where it is registered is
// what the middleware see of it, and what Routes lists, in order.
func TestRouteDeclarations(t *testing.T) {
	type seen struct {
		pattern string
		money   bool
		reveals [2]bool // without and with ?reveal=true
		maxBody int64
	}
	see := func(rt Route) seen {
		plain := httptest.NewRequest("GET", "/x", nil)
		asked := httptest.NewRequest("GET", "/x?reveal=true", nil)
		return seen{rt.Pattern(), rt.MovesMoney(), [2]bool{rt.Reveals(plain), rt.Reveals(asked)}, rt.MaxBody()}
	}
	var wrapped []seen
	rt := NewRouter(testCatalogue, nil)
	rt.Use(func(route Route, next http.Handler) HandlerFunc {
		wrapped = append(wrapped, see(route))
		return nil
	})
	asked := func(r *http.Request) bool { return r.URL.Query().Get("reveal") == "true" }
	h := func(http.ResponseWriter, *http.Request) error { return nil }
	rt.Handle("GET /things", h)
	rt.Handle("POST /things", h, Money())
	rt.Handle("POST /things/bulk", h, Money(), BodyLimit(4<<20))
	rt.Handle("GET /things/{id}", h, Reveal(asked))
	rt.Handle("POST /things/{id}/reveal", h, Reveal(nil))
	want := []seen{
		{"GET /things", false, [2]bool{false, false}, MaxBodyBytes},
		{"POST /things", true, [2]bool{false, false}, MaxBodyBytes},
		{"POST /things/bulk", true, [2]bool{false, false}, 4 << 20},
		{"GET /things/{id}", false, [2]bool{false, true}, MaxBodyBytes},
		{"POST /things/{id}/reveal", false, [2]bool{true, true}, MaxBodyBytes},
	}
	var listed []seen
	for _, route := range rt.Routes() {
		listed = append(listed, see(route))
	}
	for name, got := range map[string][]seen{"the middleware": wrapped, "Routes": listed} {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s saw\n%v, want\n%v", name, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("BodyLimit(MaxBodyBytes) did not panic")
		}
	}()
	BodyLimit(MaxBodyBytes)
}

// TestEveryAnswerIsPrivate: every answer, a route's, an error's, an
// unknown route's or a method's not allowed, says X-Content-Type-Options
// nosniff, so that no browser reads a JSON or CSV body as a page, and
// Cache-Control no-store, so that no cache keeps a secret it carries.
func TestEveryAnswerIsPrivate(t *testing.T) {
	rt := NewRouter(testCatalogue, nil)
	rt.Handle("GET /ok", func(w http.ResponseWriter, r *http.Request) error {
		Respond(w, http.StatusOK, "ok", nil)
		return nil
	})
	rt.Handle("GET /fails", func(http.ResponseWriter, *http.Request) error { return errThing })
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/ok", http.StatusOK},
		{"GET", "/fails", http.StatusNotFound},
		{"GET", "/nowhere", http.StatusNotFound},
		{"POST", "/ok", http.StatusMethodNotAllowed},
	} {
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, httptest.NewRequest(tt.method, BasePath+tt.path, nil))
		if h := w.Header(); w.Code != tt.status || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: %d, X-Content-Type-Options %q, Cache-Control %q", tt.method, tt.path, w.Code,
				h.Get("X-Content-Type-Options"), h.Get("Cache-Control"))
		}
	}
}
