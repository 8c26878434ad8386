// Package apidoc serves the API's contract, docs/openapi.yaml, as JSON at
// GET /api/v1/openapi.json, and answers the requests no route serves: 405
// with Allow when the document has the path under other methods, else 404
// ROUTE_NOT_FOUND.
//
// openapi.json is generated from docs/openapi.yaml by `make generate`
// (go generate), and `make lint` fails when it is stale.
package apidoc

//go:generate go run ./internal/genjson ../../docs/openapi.yaml openapi.json

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"

	"payments/pkg/httpapi"
)

// JSON is the OpenAPI document, as served.
//
//go:embed openapi.json
var JSON []byte

// Routes registers GET /openapi.json on rt, without a token, and makes the
// document's paths answer the requests no route of rt serves.
func Routes(rt *httpapi.Router) {
	rt.Handle("GET /openapi.json", serve)
	rt.Fallback(fallback)
}

func serve(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(JSON)
	return err
}

// fallback answers a request no route took: 405 with the methods the
// document gives its path, or 404 when the document lacks the path.
func fallback(w http.ResponseWriter, r *http.Request) error {
	methods := Methods(strings.TrimPrefix(r.URL.Path, httpapi.BasePath))
	if !strings.HasPrefix(r.URL.Path, httpapi.BasePath+"/") || len(methods) == 0 {
		return httpapi.ErrRouteNotFound
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	return httpapi.ErrMethodNotAllowed
}

// pathMethods is the document's paths, each with its methods, read once.
var pathMethods = sync.OnceValue(func() map[string][]string {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(JSON, &doc); err != nil {
		panic("apidoc: openapi.json: " + err.Error())
	}
	out := make(map[string][]string, len(doc.Paths))
	for path, item := range doc.Paths {
		for m := range item {
			if method := strings.ToUpper(m); slices.Contains(httpMethods, method) {
				out[path] = append(out[path], method)
			}
		}
		slices.Sort(out[path])
	}
	return out
})

var httpMethods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

// Methods returns the methods the document serves on path (relative to
// /api/v1, e.g. "/cards/c_1"), sorted; none when no path of the document
// matches. A {param} segment matches any one non-empty segment.
func Methods(path string) []string {
	var out []string
	for pattern, methods := range pathMethods() {
		if matches(pattern, path) {
			out = append(out, methods...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func matches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i, p := range ps {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if xs[i] == "" {
				return false
			}
		} else if p != xs[i] {
			return false
		}
	}
	return true
}
