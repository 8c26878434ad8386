package httpapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"payments/pkg/field"
)

// encoding/json matches an object's key to a struct field whatever its case
// and keeps the last of a key given twice, so {"amount":1000,"AMOUNT":5000}
// moves 5000 where a proxy reading "amount" sees 1000. checkKeys refuses
// both before the body is decoded: a key must be a field's name as its
// json tag spells it, and appear once in its object.

// maxKeyDepth bounds the nesting checkKeys follows; encoding/json refuses
// deeper bodies itself.
const maxKeyDepth = 10000

// errNotJSON stops checkKeys on text that is not JSON: the decoder then
// names what is wrong.
var errNotJSON = errors.New("httpapi: not JSON")

// shape is what the keys of a JSON value decoded into a Go type must be: a
// struct's fields by exact name (fields not nil), or the shape of the
// elements of a slice, array or map. A nil shape checks no names; the keys
// of its objects must still be distinct.
type shape struct {
	fields map[string]*shape
	elem   *shape
}

// shapes caches the shape of each type decoded into.
var shapes sync.Map // reflect.Type → *shape

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// shapeOf returns the shape of t, computed once.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

// buildShape computes the shape of t; building holds the struct shapes
// being built, for a type that refers to itself.
func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A type that decodes itself (json.RawMessage, time.Time) takes
	// any keys.
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if s, ok := building[t]; ok {
			return s
		}
		s := &shape{fields: map[string]*shape{}}
		building[t] = s
		addFields(s, t, building)
		return s
	case reflect.Slice, reflect.Array, reflect.Map:
		if elem := buildShape(t.Elem(), building); elem != nil {
			return &shape{elem: elem}
		}
	}
	return nil
}

// addFields adds to s the fields encoding/json decodes into t: by their
// json tag's name, else their Go name; an untagged embedded struct's
// fields are promoted, unless t has a field of that name.
func addFields(s *shape, t reflect.Type, building map[reflect.Type]*shape) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			embedded = append(embedded, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.fields[name] = buildShape(f.Type, building)
	}
	for _, et := range embedded {
		inner := buildShape(et, building)
		if inner == nil || inner.fields == nil {
			continue
		}
		for name, fs := range inner.fields {
			if _, taken := s.fields[name]; !taken {
				s.fields[name] = fs
			}
		}
	}
}

// checkKeys walks body beside t, the type it decodes into, and refuses
// the first key that is not a field of its struct as spelled (a 400
// naming it as unknown) and the first key given twice in one object (a 400
// naming it). Text that is not JSON is left to the decoder.
func checkKeys(body []byte, t reflect.Type) error {
	var s *shape
	if t != nil {
		s = shapeOf(t)
	}
	k := keyScanner{data: body}
	if err := k.value(s); err != nil && err != errNotJSON {
		return err
	}
	return nil
}

// keyScanner reads one JSON value from data, at i; path is where the
// value being read is.
type keyScanner struct {
	data []byte
	i    int
	path []step
}

// step is one step of a path: a key of an object, or the index of an array
// element.
type step struct {
	key   []byte
	index int // of an array element; -1 for a key
}

// name returns the field name of path and then key: keys joined with
// dots, indexes in brackets ("rules[0].percent").
func name(path []step, key string) string {
	var b strings.Builder
	for _, s := range path {
		if s.index >= 0 {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(s.key)
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(key)
	return b.String()
}

func (k *keyScanner) skipSpace() {
	for k.i < len(k.data) {
		switch k.data[k.i] {
		case ' ', '\t', '\n', '\r':
			k.i++
		default:
			return
		}
	}
}

// value reads one value whose keys must fit s.
func (k *keyScanner) value(s *shape) error {
	k.skipSpace()
	if k.i >= len(k.data) {
		return errNotJSON
	}
	switch k.data[k.i] {
	case '{':
		return k.object(s)
	case '[':
		return k.array(s)
	case '"':
		_, err := k.str()
		return err
	}
	start := k.i
	for k.i < len(k.data) && isScalarByte(k.data[k.i]) {
		k.i++
	}
	if k.i == start {
		return errNotJSON
	}
	return nil
}

// isScalarByte reports whether c may be part of a number, true, false or
// null; the decoder checks which.
func isScalarByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.'
}

// object reads an object, the current byte its '{'.
func (k *keyScanner) object(s *shape) error {
	if len(k.path) >= maxKeyDepth {
		return errNotJSON
	}
	k.i++
	var seenBuf [16][]byte
	seen := seenBuf[:0]
	var seenMap map[string]bool
	for n := 0; ; n++ {
		k.skipSpace()
		if k.i >= len(k.data) {
			return errNotJSON
		}
		if k.data[k.i] == '}' && n == 0 {
			k.i++
			return nil
		}
		if k.data[k.i] != '"' {
			return errNotJSON
		}
		key, err := k.str()
		if err != nil {
			return err
		}
		// A key is given twice: by a small object's list, a large one's
		// map.
		if seenMap == nil && len(seen) == len(seenBuf) {
			seenMap = make(map[string]bool, 2*len(seen))
			for _, b := range seen {
				seenMap[string(b)] = true
			}
		}
		if seenMap != nil {
			if seenMap[string(key)] {
				return duplicateKey(k.path, string(key))
			}
			seenMap[string(key)] = true
		} else {
			for _, b := range seen {
				if bytes.Equal(b, key) {
					return duplicateKey(k.path, string(key))
				}
			}
			seen = append(seen, key)
		}
		var inner *shape
		switch {
		case s == nil:
		case s.fields != nil:
			fs, ok := s.fields[string(key)]
			if !ok {
				return unknownKey(k.path, string(key), s)
			}
			inner = fs
		default:
			inner = s.elem
		}
		k.skipSpace()
		if k.i >= len(k.data) || k.data[k.i] != ':' {
			return errNotJSON
		}
		k.i++
		k.path = append(k.path, step{key: key, index: -1})
		err = k.value(inner)
		k.path = k.path[:len(k.path)-1]
		if err != nil {
			return err
		}
		k.skipSpace()
		if k.i >= len(k.data) {
			return errNotJSON
		}
		switch k.data[k.i] {
		case ',':
			k.i++
		case '}':
			k.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// array reads an array, the current byte its '['.
func (k *keyScanner) array(s *shape) error {
	if len(k.path) >= maxKeyDepth {
		return errNotJSON
	}
	k.i++
	var elem *shape
	if s != nil && s.fields == nil {
		elem = s.elem
	}
	for n := 0; ; n++ {
		k.skipSpace()
		if k.i < len(k.data) && k.data[k.i] == ']' && n == 0 {
			k.i++
			return nil
		}
		k.path = append(k.path, step{index: n})
		err := k.value(elem)
		k.path = k.path[:len(k.path)-1]
		if err != nil {
			return err
		}
		k.skipSpace()
		if k.i >= len(k.data) {
			return errNotJSON
		}
		switch k.data[k.i] {
		case ',':
			k.i++
		case ']':
			k.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// str reads a string, the current byte its '"', and returns its text: the
// bytes between the quotes when they hold no escape and only ASCII, else
// the text encoding/json reads from them.
func (k *keyScanner) str() ([]byte, error) {
	start := k.i
	k.i++
	plain := true
	for k.i < len(k.data) {
		switch c := k.data[k.i]; {
		case c == '"':
			k.i++
			if plain {
				return k.data[start+1 : k.i-1], nil
			}
			var s string
			if json.Unmarshal(k.data[start:k.i], &s) != nil {
				return nil, errNotJSON
			}
			return []byte(s), nil
		case c == '\\':
			plain = false
			k.i += 2
		case c < 0x20:
			return nil, errNotJSON
		default:
			if c >= 0x80 {
				plain = false
			}
			k.i++
		}
	}
	return nil, errNotJSON
}

// unknownKey is the error of key, which is no field of s: named as sent,
// with the field it differs from only in case, if any.
func unknownKey(path []step, key string, s *shape) error {
	problem := "unknown field"
	for field := range s.fields {
		if strings.EqualFold(field, key) {
			problem = "unknown field (names are case-sensitive: " + field + ")"
			break
		}
	}
	return fieldProblem(path, key, problem, "has an unknown field")
}

// duplicateKey is the error of key given twice in one object.
func duplicateKey(path []step, key string) error {
	return fieldProblem(path, key, "is given more than once", "has a key given more than once")
}

// fieldProblem returns problem on key at path, or bodyProblem on body
// when key is empty or too long to repeat.
func fieldProblem(path []step, key, problem, bodyProblem string) error {
	if key == "" || len(key) > maxFieldName {
		return field.Invalid("body", bodyProblem)
	}
	return field.Invalid(name(path, key), problem)
}
