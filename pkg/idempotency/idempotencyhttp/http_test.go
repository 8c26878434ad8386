package idempotencyhttp_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/idempotency/idempotencyhttp"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		key    string
		ok     bool
		bad    bool
	}{
		{"absent", nil, "", false, false},
		{"one character", []string{"k"}, "k", true, false},
		{"255 characters", []string{strings.Repeat("k", 255)}, strings.Repeat("k", 255), true, false},
		{"spaces and punctuation", []string{"order 7/#1:x"}, "order 7/#1:x", true, false},
		{"empty", []string{""}, "", true, true},
		{"256 characters", []string{strings.Repeat("k", 256)}, "", true, true},
		{"not ASCII", []string{"clé"}, "", true, true},
		{"a control character", []string{"a\nb"}, "", true, true},
		{"sent twice", []string{"a", "b"}, "", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			for _, v := range tt.values {
				r.Header.Add(idempotency.Header, v)
			}
			key, ok, err := idempotencyhttp.ParseKey(r)
			var fe *field.Error
			if key != tt.key || ok != tt.ok || (err != nil) != tt.bad || (tt.bad && (!errors.As(err, &fe) || fe.Field != idempotency.Header)) {
				t.Fatalf("ParseKey = %q, %v, %v", key, ok, err)
			}
		})
	}
}

func TestStored(t *testing.T) {
	retry := http.Header{"Retry-After": {"1"}}
	tests := []struct {
		status int
		header http.Header
		stored bool
	}{
		{200, nil, true},
		{201, http.Header{}, true},
		{400, nil, true},
		{422, nil, true},
		{409, nil, true},
		{500, nil, true},
		{503, nil, true},
		{502, retry, false},
		{409, retry, false},
		{503, retry, false},
	}
	for _, tt := range tests {
		if got := idempotencyhttp.Stored(tt.status, tt.header); got != tt.stored {
			t.Errorf("Stored(%d, %v) = %v", tt.status, tt.header, got)
		}
	}
}
