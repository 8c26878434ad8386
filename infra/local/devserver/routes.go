package devserver

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Route wires an HTTP API route to a function, as the template's HttpApi
// events declare it.
type Route struct {
	// Method is an HTTP method or "ANY".
	Method string
	// Path is the route's path with {param} segments and at most one
	// trailing {name+} greedy segment, e.g. "/api/v1/wallets/{id}", or
	// "$default" for the catch-all route.
	Path string
	// Function is the function's folder name under functions/.
	Function string
	// IAM: the route's authorizer is AWS_IAM. Locally no SigV4 is checked;
	// the caller names its principal in CallerPrincipalHeader instead.
	IAM bool
}

// Key returns the route key API Gateway puts in the event: "GET /wallets/{id}"
// or "$default".
func (r Route) Key() string {
	if r.Path == "$default" {
		return "$default"
	}
	return r.Method + " " + r.Path
}

type segKind int

// The order is the order of precedence: a literal segment beats a
// parameter, which beats a greedy parameter.
const (
	segGreedy segKind = iota
	segParam
	segLiteral
)

type segment struct {
	kind segKind
	text string // the literal, or the parameter's name
}

type compiledRoute struct {
	Route
	segs []segment
}

// routeTable matches requests to routes with API Gateway HTTP API semantics:
// the most specific path wins (literal segments over {param} over {proxy+},
// compared from the left), then an exact method over ANY, then $default.
type routeTable struct {
	routes []compiledRoute // most specific first
	def    *compiledRoute
}

func newRouteTable(routes []Route) (*routeTable, error) {
	t := &routeTable{}
	seen := map[string]string{}
	for _, r := range routes {
		if prev, dup := seen[r.Key()]; dup {
			return nil, fmt.Errorf("route %q is wired to both %s and %s", r.Key(), prev, r.Function)
		}
		seen[r.Key()] = r.Function
		if r.Path == "$default" {
			cr := compiledRoute{Route: r}
			t.def = &cr
			continue
		}
		r.Method = strings.ToUpper(r.Method)
		if !strings.HasPrefix(r.Path, "/") {
			return nil, fmt.Errorf("route %q: the path must start with /", r.Key())
		}
		cr := compiledRoute{Route: r}
		parts := strings.Split(r.Path[1:], "/")
		for i, p := range parts {
			switch {
			case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "+}"):
				if i != len(parts)-1 {
					return nil, fmt.Errorf("route %q: a greedy parameter must be the last segment", r.Key())
				}
				cr.segs = append(cr.segs, segment{segGreedy, p[1 : len(p)-2]})
			case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
				cr.segs = append(cr.segs, segment{segParam, p[1 : len(p)-1]})
			case strings.ContainsAny(p, "{}"):
				return nil, fmt.Errorf("route %q: a parameter must fill a whole segment", r.Key())
			default:
				cr.segs = append(cr.segs, segment{segLiteral, p})
			}
		}
		t.routes = append(t.routes, cr)
	}
	slices.SortStableFunc(t.routes, func(a, b compiledRoute) int {
		for i := 0; i < len(a.segs) && i < len(b.segs); i++ {
			if c := cmp.Compare(b.segs[i].kind, a.segs[i].kind); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(len(b.segs), len(a.segs)); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.Method == "ANY"), boolInt(b.Method == "ANY"))
	})
	return t, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// match returns the route for method and the escaped path, with its path
// parameters (unescaped), or nil.
func (t *routeTable) match(method, escapedPath string) (*compiledRoute, map[string]string) {
	if strings.HasPrefix(escapedPath, "/") {
		parts := strings.Split(escapedPath[1:], "/")
		for i := range t.routes {
			r := &t.routes[i]
			if r.Method != "ANY" && r.Method != method {
				continue
			}
			if params, ok := r.matchPath(parts); ok {
				return r, params
			}
		}
	}
	if t.def != nil {
		return t.def, nil
	}
	return nil, nil
}

func (r *compiledRoute) matchPath(parts []string) (map[string]string, bool) {
	var params map[string]string
	set := func(name, raw string) {
		if params == nil {
			params = map[string]string{}
		}
		if v, err := url.PathUnescape(raw); err == nil {
			raw = v
		}
		params[name] = raw
	}
	for i, s := range r.segs {
		if s.kind == segGreedy {
			if i >= len(parts) {
				return nil, false
			}
			rest := strings.Join(parts[i:], "/")
			if rest == "" {
				return nil, false
			}
			set(s.text, rest)
			return params, true
		}
		if i >= len(parts) {
			return nil, false
		}
		switch s.kind {
		case segParam:
			if parts[i] == "" {
				return nil, false
			}
			set(s.text, parts[i])
		case segLiteral:
			if parts[i] != s.text {
				return nil, false
			}
		}
	}
	return params, len(parts) == len(r.segs)
}
