package apitest

import (
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
)

// Operation is one operation of the document, named by its method and its
// path as the document writes it ("/cards/{id}/transactions").
type Operation struct {
	Method string
	Path   string
	Op     *openapi3.Operation
	Item   *openapi3.PathItem // the path's, whose parameters are the operation's too
}

// String returns the operation as "METHOD /path", as Routes names it.
func (o Operation) String() string { return o.Method + " " + o.Path }

// Params returns the names of the operation's parameters found in in
// ("query", "path"), its path's first, in the document's order.
func (o Operation) Params(in string) []string {
	var out []string
	for _, p := range o.Parameters() {
		if p.In == in {
			out = append(out, p.Name)
		}
	}
	return out
}

// Parameters returns the operation's parameters, its path's first.
func (o Operation) Parameters() []*openapi3.Parameter {
	var out []*openapi3.Parameter
	var all openapi3.Parameters
	if o.Item != nil {
		all = append(all, o.Item.Parameters...)
	}
	for _, p := range append(all, o.Op.Parameters...) {
		if p.Value != nil {
			out = append(out, p.Value)
		}
	}
	return out
}

// HasBody reports whether the operation takes a JSON request body.
func (o Operation) HasBody() bool {
	return o.Op.RequestBody != nil && o.Op.RequestBody.Value != nil &&
		o.Op.RequestBody.Value.Content.Get("application/json") != nil
}

// BodyFields returns the names of the fields of the operation's JSON
// request body, sorted; none when it takes no body or an empty object.
func (o Operation) BodyFields() []string {
	if !o.HasBody() {
		return nil
	}
	mt := o.Op.RequestBody.Value.Content.Get("application/json")
	if mt.Schema == nil {
		return nil
	}
	var out []string
	var walk func(s *openapi3.Schema)
	walk = func(s *openapi3.Schema) {
		if s == nil {
			return
		}
		for name := range s.Properties {
			out = append(out, name)
		}
		for _, sub := range s.AllOf {
			walk(sub.Value)
		}
	}
	walk(mt.Schema.Value)
	slices.Sort(out)
	return slices.Compact(out)
}

// Signed reports whether the operation is a provider's notification,
// authenticated by its signature (a security scheme named *Signature)
// rather than a company's token or the admin key.
func (o Operation) Signed() bool {
	if o.Op.Security == nil {
		return false
	}
	for _, req := range *o.Op.Security {
		for scheme := range req {
			if strings.HasSuffix(scheme, "Signature") {
				return true
			}
		}
	}
	return false
}

// Operations returns every operation of the document's paths, sorted as
// Routes sorts them.
func (c *Contract) Operations() []Operation {
	var out []Operation
	for path, item := range c.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			out = append(out, Operation{Method: method, Path: path, Op: op, Item: item})
		}
	}
	slices.SortFunc(out, func(a, b Operation) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// IdempotentRoutes returns the routes ("METHOD /path") whose operation
// takes the Idempotency-Key header: the routes that move money, sorted.
func (c *Contract) IdempotentRoutes() []string {
	var out []string
	for _, o := range c.Operations() {
		if slices.ContainsFunc(o.Params("header"), func(name string) bool { return strings.EqualFold(name, idempotency.Header) }) {
			out = append(out, o.String())
		}
	}
	return out
}

// PagedRoute is a list of the document: a GET operation that takes a
// cursor query parameter.
type PagedRoute struct {
	Operation
	// ItemID is the field that identifies the list's items: "id" when its
	// items have one, else their one required field of format uuid; ""
	// when the document does not tell.
	ItemID string
	// FirstPage and LastPage are the page numbers the list's page
	// parameter allows (its schema's minimum and maximum): 1 and
	// httpapi.MaxPage unless the document says otherwise.
	FirstPage, LastPage int
}

// PagedRoutes returns the document's lists, sorted by path.
func (c *Contract) PagedRoutes() []PagedRoute {
	var out []PagedRoute
	for _, o := range c.Operations() {
		if o.Method != http.MethodGet || !slices.Contains(o.Params("query"), "cursor") {
			continue
		}
		r := PagedRoute{Operation: o, ItemID: itemID(o.Op), FirstPage: 1, LastPage: httpapi.MaxPage}
		if p := o.Op.Parameters.GetByInAndName("query", "page"); p != nil && p.Schema != nil && p.Schema.Value != nil {
			if min := p.Schema.Value.Min; min != nil {
				r.FirstPage = int(*min)
			}
			if max := p.Schema.Value.Max; max != nil {
				r.LastPage = int(*max)
			}
		}
		out = append(out, r)
	}
	return out
}

// itemID returns the identifying field of the items of op's 200 answer
// (its data array), or "" when the document does not tell it.
func itemID(op *openapi3.Operation) string {
	ok := op.Responses.Status(http.StatusOK)
	if ok == nil || ok.Value == nil {
		return ""
	}
	mt := ok.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return ""
	}
	data := property(mt.Schema.Value, "data")
	if data == nil || data.Items == nil || data.Items.Value == nil {
		return ""
	}
	item := data.Items.Value
	if property(item, "id") != nil {
		return "id"
	}
	var ids []string
	for _, name := range required(item) {
		if p := property(item, name); p != nil && p.Format == "uuid" {
			ids = append(ids, name)
		}
	}
	if len(ids) != 1 {
		return ""
	}
	return ids[0]
}

// property returns the schema of s's property name, looking through allOf.
func property(s *openapi3.Schema, name string) *openapi3.Schema {
	if s == nil {
		return nil
	}
	if p := s.Properties[name]; p != nil {
		return p.Value
	}
	for _, sub := range s.AllOf {
		if p := property(sub.Value, name); p != nil {
			return p
		}
	}
	return nil
}

// required returns the required properties of s and of its allOf.
func required(s *openapi3.Schema) []string {
	out := slices.Clone(s.Required)
	for _, sub := range s.AllOf {
		if sub.Value != nil {
			out = append(out, required(sub.Value)...)
		}
	}
	return out
}

// Find returns the operation of the document that serves method on
// target, a path under the API's base (httpapi.BasePath) with or without
// its query; false when no operation does.
func (c *Contract) Find(method, target string) (Operation, bool) {
	path, _, _ := strings.Cut(target, "?")
	req, err := http.NewRequest(method, "http://"+host+httpapi.BasePath+path, nil)
	if err != nil {
		return Operation{}, false
	}
	route, _, err := c.router.FindRoute(req)
	if err != nil {
		return Operation{}, false
	}
	return Operation{Method: route.Method, Path: route.Path, Op: route.Operation, Item: route.PathItem}, true
}
