package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"payments/pkg/field"
)

// MaxBodyBytes caps a JSON request body; a larger one is a 413.
const MaxBodyBytes = 64 << 10

// maxFieldName is the longest unknown field name an error repeats; an
// unknown field with a longer or an empty name is reported on body.
const maxFieldName = 128

// Decode reads r's body as one JSON object into v: at most MaxBodyBytes,
// numbers kept exact, keys matched to fields exactly (a key in another
// case than its field's json tag is an unknown field), unknown fields and
// keys given twice in one object refused, and every failure a
// field.Error or size error naming what is wrong. A json.Number field also
// takes a string holding a number ("20"): decode a number the client must
// send as a JSON number into a json.RawMessage and read it with
// money.Number or money.ParseAmount.
func Decode(r *http.Request, v any) error {
	if err := checkJSON(r); err != nil {
		return err
	}
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(body, v)
}

// DecodeOptional is Decode for a route whose body is optional: an empty
// body, whatever its Content-Type, leaves v as it is.
func DecodeOptional(r *http.Request, v any) error {
	body, err := ReadBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	if err := checkJSON(r); err != nil {
		return err
	}
	return DecodeBytes(body, v)
}

// checkJSON refuses a request whose Content-Type, when it has one, is not
// JSON.
func checkJSON(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return ErrUnsupportedMediaType
		}
	}
	return nil
}

// ReadBody reads the body of r, at most MaxBodyBytes: a larger body is an
// *http.MaxBytesError (413), one that cannot be read a field error on
// "body".
func ReadBody(r *http.Request) ([]byte, error) { return ReadBodyLimit(r, MaxBodyBytes) }

// ReadBodyLimit is ReadBody for a route that takes up to limit bytes.
func ReadBodyLimit(r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, field.Invalid("body", "could not be read")
	}
	return body, nil
}

// DecodeBytes is Decode for a body already read.
func DecodeBytes(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return field.Invalid("body", "must be a JSON object")
	}
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	// null decodes into a struct or a map without an error, leaving it as
	// it was: where an object is expected, it is refused as any other value
	// that is not an object.
	if wantsObject(reflect.TypeOf(v)) && !startsObject(body) {
		return field.Invalid("body", "must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return field.Invalid("body", "must hold a single JSON object")
	}
	return nil
}

// wantsObject reports whether t, once dereferenced, is decoded from a JSON
// object: a struct or a map that does not decode itself.
func wantsObject(t reflect.Type) bool {
	if t == nil {
		return false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return false
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// startsObject reports whether the JSON text body starts with an object.
func startsObject(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '{'
}

func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return field.Invalid("body", fmt.Sprintf("malformed JSON at offset %d", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return field.Invalid("body", "malformed JSON: unexpected end")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return field.Invalid("body", "must be a JSON object")
		}
		return field.Invalid(typ.Field, "must be "+jsonKind(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if unquoted, err := strconv.Unquote(name); err == nil {
			name = unquoted
		}
		if name == "" || len(name) > maxFieldName {
			return field.Invalid("body", "has an unknown field")
		}
		return field.Invalid(name, "unknown field")
	}
	return field.Invalid("body", "malformed JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64":
		return "an integer"
	case "float64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "of another type"
}
