package kyc_test

import (
	"testing"

	"payments/infra/local/samples"
	"payments/pkg/providers/kyc"
)

// html is a document that is not one: a sign-in page.
var html = []byte("<!doctype html><html><body>Sign in to see this file.</body></html>")

// jpeg is the start of a JPEG image: its magic number and a JFIF marker.
var jpeg = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")

func TestContentType(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want string
		ok   bool
	}{
		{"JPEG magic", []byte("\xff\xd8\xff"), "image/jpeg", true},
		{"JPEG with JFIF", jpeg, "image/jpeg", true},
		{"PNG", samples.PNG(), "image/png", true},
		{"PNG signature", []byte("\x89PNG\r\n\x1a\n"), "image/png", true},
		{"PDF", samples.PDF(), "application/pdf", true},
		{"PDF magic", []byte("%PDF-"), "application/pdf", true},
		{"HTML", html, "", false},
		{"HTML that claims to be a PNG", []byte("<html><img src=x.png>\x89PNG"), "", false},
		{"plain text", []byte("identity document"), "", false},
		{"GIF", []byte("GIF89a\x01\x00\x01\x00"), "", false},
		{"JPEG magic cut short", []byte("\xff\xd8"), "", false},
		{"PDF magic without its dash", []byte("%PDF"), "", false},
		{"empty", []byte{}, "", false},
		{"nil", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, ok := kyc.ContentType(tt.b); got != tt.want || ok != tt.ok {
				t.Fatalf("ContentType = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
