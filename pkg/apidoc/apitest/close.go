package apitest

import (
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Close makes doc strict for the tests: each allOf whose parts are all
// objects becomes one object with their properties and required keys, and
// every object schema with properties and no additionalProperties of its
// own gets additionalProperties: false.
func Close(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	for _, ref := range doc.Components.Schemas {
		closeSchema(ref, seen)
	}
	for _, item := range doc.Paths.Map() {
		closeItem(item, seen)
	}
	for _, item := range doc.Webhooks {
		closeItem(item, seen)
	}
}

func closeItem(item *openapi3.PathItem, seen map[*openapi3.Schema]bool) {
	for _, op := range item.Operations() {
		for _, p := range op.Parameters {
			if p.Value != nil {
				closeSchema(p.Value.Schema, seen)
			}
		}
		if op.RequestBody != nil && op.RequestBody.Value != nil {
			for _, mt := range op.RequestBody.Value.Content {
				closeSchema(mt.Schema, seen)
			}
		}
		for _, r := range op.Responses.Map() {
			if r.Value == nil {
				continue
			}
			for _, mt := range r.Value.Content {
				closeSchema(mt.Schema, seen)
			}
		}
	}
}

func closeSchema(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if len(s.AllOf) > 0 && allObjects(s.AllOf) {
		props := openapi3.Schemas{}
		var required []string
		for _, part := range s.AllOf {
			for k, v := range part.Value.Properties {
				props[k] = v
			}
			required = append(required, part.Value.Required...)
		}
		for k, v := range s.Properties {
			props[k] = v
		}
		required = append(required, s.Required...)
		slices.Sort(required)
		s.AllOf, s.Properties, s.Required = nil, props, slices.Compact(required)
		s.Type = &openapi3.Types{openapi3.TypeObject}
	}
	for _, p := range s.Properties {
		closeSchema(p, seen)
	}
	for _, list := range [][]*openapi3.SchemaRef{s.OneOf, s.AnyOf, s.AllOf, s.PrefixItems} {
		for _, sub := range list {
			closeSchema(sub, seen)
		}
	}
	closeSchema(s.Items, seen)
	closeSchema(s.AdditionalProperties.Schema, seen)
	if s.Type.Is(openapi3.TypeObject) && len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		closed := false
		s.AdditionalProperties.Has = &closed
	}
}

// allObjects reports whether every part is an object schema (so merging
// their properties means what allOf means).
func allObjects(parts []*openapi3.SchemaRef) bool {
	for _, p := range parts {
		if p.Value == nil || !p.Value.Type.Is(openapi3.TypeObject) || len(p.Value.AllOf)+len(p.Value.OneOf)+len(p.Value.AnyOf) > 0 {
			return false
		}
	}
	return true
}
