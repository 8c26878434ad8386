package dynamo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Filter is a FilterExpression under construction: conditions that must
// all hold and, when or is set, one more that lets an item pass anyway.
type Filter struct {
	all []condition
	or  *condition
}

// condition is attr = value, NOT attr = value (also true when the item
// has no attr), contains(attr, value) for a substring or
// begins_with(attr, value) for a prefix.
type condition struct {
	op    string // "=", "not =", "contains" or "begins_with"
	attr  string
	value any
}

// Equal adds the condition attr = v (v a string, number or bool).
func (f *Filter) Equal(attr string, v any) {
	f.all = append(f.all, condition{op: "=", attr: attr, value: v})
}

// NotEqual adds the condition NOT attr = v, which an item without attr
// also passes.
func (f *Filter) NotEqual(attr string, v any) {
	f.all = append(f.all, condition{op: "not =", attr: attr, value: v})
}

// Contains adds the condition that the string attr contains s.
func (f *Filter) Contains(attr, s string) {
	f.all = append(f.all, condition{op: "contains", attr: attr, value: s})
}

// BeginsWith adds the condition that the string attr starts with prefix.
func (f *Filter) BeginsWith(attr, prefix string) {
	f.all = append(f.all, condition{op: "begins_with", attr: attr, value: prefix})
}

// build returns the expression ("" when nothing is filtered), its names and
// its values, with placeholders #f0, :f0, #f1, :f1, ….
func (f Filter) build() (string, map[string]string, map[string]types.AttributeValue, error) {
	names := map[string]string{}
	values := map[string]types.AttributeValue{}
	term := func(c condition) (string, error) {
		i := strconv.Itoa(len(names))
		n, val := "#f"+i, ":f"+i
		av, err := attributevalue.Marshal(c.value)
		if err != nil {
			return "", fmt.Errorf("store: filter on %s: %w", c.attr, err)
		}
		names[n], values[val] = c.attr, av
		switch c.op {
		case "contains":
			return "contains(" + n + ", " + val + ")", nil
		case "begins_with":
			return "begins_with(" + n + ", " + val + ")", nil
		case "not =":
			return "NOT " + n + " = " + val, nil
		}
		return n + " = " + val, nil
	}
	var terms []string
	for _, c := range f.all {
		t, err := term(c)
		if err != nil {
			return "", nil, nil, err
		}
		terms = append(terms, t)
	}
	expr := strings.Join(terms, " AND ")
	if f.or != nil && expr != "" {
		t, err := term(*f.or)
		if err != nil {
			return "", nil, nil, err
		}
		expr = "(" + expr + ") OR " + t
	}
	return expr, names, values, nil
}
