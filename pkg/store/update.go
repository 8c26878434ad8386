package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// AttrUpdate builds an UpdateExpression of SET a = :v, SET n = n + :d and
// REMOVE a clauses with placeholder names for every attribute.
type AttrUpdate struct {
	clauses []string
	removes []string
	names   map[string]string
	raw     map[string]any
}

// NewAttrUpdate returns an empty update.
func NewAttrUpdate() *AttrUpdate {
	return &AttrUpdate{names: map[string]string{}, raw: map[string]any{}}
}

func (u *AttrUpdate) placeholders(attr string, v any) (string, string) {
	i := len(u.clauses)
	n, val := fmt.Sprintf("#a%d", i), fmt.Sprintf(":v%d", i)
	u.names[n] = attr
	u.raw[val] = v
	return n, val
}

// Set adds the clause SET attr = v.
func (u *AttrUpdate) Set(attr string, v any) {
	n, val := u.placeholders(attr, v)
	u.clauses = append(u.clauses, n+" = "+val)
}

// Add adds the clause SET attr = attr + delta.
func (u *AttrUpdate) Add(attr string, delta int) {
	n, val := u.placeholders(attr, delta)
	u.clauses = append(u.clauses, n+" = "+n+" + "+val)
}

// Remove adds the clause REMOVE attr.
func (u *AttrUpdate) Remove(attr string) {
	n := fmt.Sprintf("#r%d", len(u.removes))
	u.names[n] = attr
	u.removes = append(u.removes, n)
}

// Build returns the UpdateExpression, its attribute names and its
// values, an error when it has no SET clause.
func (u *AttrUpdate) Build() (string, map[string]string, map[string]types.AttributeValue, error) {
	if len(u.clauses) == 0 {
		return "", nil, nil, errors.New("empty update")
	}
	values := make(map[string]types.AttributeValue, len(u.raw))
	for k, v := range u.raw {
		av, err := attributevalue.Marshal(v)
		if err != nil {
			return "", nil, nil, fmt.Errorf("marshal %s: %w", u.names["#a"+k[2:]], err)
		}
		values[k] = av
	}
	expr := "SET " + strings.Join(u.clauses, ", ")
	if len(u.removes) > 0 {
		expr += " REMOVE " + strings.Join(u.removes, ", ")
	}
	return expr, u.names, values, nil
}
