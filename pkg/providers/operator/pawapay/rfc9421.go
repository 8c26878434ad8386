package pawapay

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
)

// This file is the part of RFC 9421 (HTTP Message Signatures) and RFC 9530
// (Digest Fields) that verifying pawaPay's callbacks needs: the dictionary
// members of Signature-Input, Signature and Content-Digest, the signature
// base, and the four algorithms pawaPay signs with.

// sigInput is one member of Signature-Input.
type sigInput struct {
	label      string
	components []string          // covered component identifiers, in order
	params     map[string]string // alg, keyid, created, expires… unquoted
	raw        string            // the member's value as received: @signature-params
}

// splitMembers splits a structured-field dictionary into its members at the
// commas outside quotes and parentheses.
func splitMembers(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == '(':
			depth++
		case !quoted && c == ')':
			depth--
		case !quoted && depth == 0 && c == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// parseSignatureInput reads every member of a Signature-Input header.
func parseSignatureInput(h string) ([]sigInput, error) {
	var out []sigInput
	for _, m := range splitMembers(h) {
		label, value, ok := strings.Cut(m, "=")
		if !ok || label == "" || !strings.HasPrefix(value, "(") {
			return nil, errors.New("the Signature-Input header is not a dictionary of inner lists")
		}
		end := strings.IndexByte(value, ')')
		if end < 0 {
			return nil, errors.New("the Signature-Input header has an unclosed list")
		}
		in := sigInput{label: strings.ToLower(strings.TrimSpace(label)), raw: value, params: map[string]string{}}
		for _, item := range strings.Fields(value[1:end]) {
			if len(item) < 2 || item[0] != '"' || item[len(item)-1] != '"' || strings.Count(item, `"`) != 2 {
				return nil, errors.New("the Signature-Input header covers a component this verifier does not read")
			}
			in.components = append(in.components, item[1:len(item)-1])
		}
		for _, p := range strings.Split(value[end+1:], ";")[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			in.params[k] = v
		}
		out = append(out, in)
	}
	return out, nil
}

// parseByteSequences reads a dictionary whose members are byte sequences
// (label=:base64:), as Signature and Content-Digest are.
func parseByteSequences(h string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, m := range splitMembers(h) {
		k, v, ok := strings.Cut(m, "=")
		if !ok || len(v) < 2 || v[0] != ':' || v[len(v)-1] != ':' {
			return nil, errors.New("not a dictionary of byte sequences")
		}
		b, err := base64.StdEncoding.DecodeString(v[1 : len(v)-1])
		if err != nil {
			return nil, errors.New("a byte sequence is not base64")
		}
		out[strings.ToLower(strings.TrimSpace(k))] = b
	}
	return out, nil
}

// checkDigest checks body against a Content-Digest header: the digests of
// the algorithms it knows (sha-256, sha-512) must be there and all match.
func checkDigest(h string, body []byte) error {
	digests, err := parseByteSequences(h)
	if err != nil {
		return fmt.Errorf("the Content-Digest header: %v", err)
	}
	checked := 0
	for alg, want := range digests {
		var got []byte
		switch alg {
		case "sha-256":
			s := sha256.Sum256(body)
			got = s[:]
		case "sha-512":
			s := sha512.Sum512(body)
			got = s[:]
		default:
			continue
		}
		if subtle.ConstantTimeCompare(got, want) != 1 {
			return fmt.Errorf("the Content-Digest %s does not match the body", alg)
		}
		checked++
	}
	if checked == 0 {
		return errors.New("the Content-Digest header has no sha-256 or sha-512 digest")
	}
	return nil
}

// signatureBase builds the signature base of RFC 9421 §2.5 for in over a
// request of method to path, whose headers are header (the authority is its
// Host).
func signatureBase(in sigInput, method, path string, header http.Header) (string, error) {
	var b strings.Builder
	for _, c := range in.components {
		var v string
		switch c {
		case "@method":
			v = method
		case "@authority":
			v = strings.ToLower(header.Get("Host"))
		case "@path":
			v = path
		default:
			if strings.HasPrefix(c, "@") {
				return "", fmt.Errorf("component %s is not supported", c)
			}
			vals := header.Values(c)
			if len(vals) == 0 {
				return "", fmt.Errorf("covered header %s is missing", c)
			}
			for i := range vals {
				vals[i] = strings.TrimSpace(vals[i])
			}
			v = strings.Join(vals, ", ")
		}
		if v == "" || strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("component %s is empty", c)
		}
		fmt.Fprintf(&b, "%q: %s\n", c, v)
	}
	fmt.Fprintf(&b, "%q: %s", "@signature-params", in.raw)
	return b.String(), nil
}

// verifySignature checks sig over base with key under alg (RFC 9421 §3.3);
// an empty alg is inferred from an EC key.
func verifySignature(key crypto.PublicKey, alg, base string, sig []byte) error {
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		var h []byte
		var size int
		switch {
		case k.Curve == elliptic.P256() && (alg == "" || alg == "ecdsa-p256-sha256"):
			s := sha256.Sum256([]byte(base))
			h, size = s[:], 32
		case k.Curve == elliptic.P384() && (alg == "" || alg == "ecdsa-p384-sha384"):
			s := sha512.Sum384([]byte(base))
			h, size = s[:], 48
		default:
			return fmt.Errorf("algorithm %q does not fit the key", alg)
		}
		if len(sig) == 2*size {
			r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
			if ecdsa.Verify(k, h, r, s) {
				return nil
			}
			return errors.New("the signature does not verify")
		}
		if ecdsa.VerifyASN1(k, h, sig) { // tolerated: DER rather than r||s
			return nil
		}
		return errors.New("the signature does not verify")
	case *rsa.PublicKey:
		switch alg {
		case "rsa-pss-sha512":
			s := sha512.Sum512([]byte(base))
			if rsa.VerifyPSS(k, crypto.SHA512, s[:], sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}) == nil {
				return nil
			}
		case "rsa-v1_5-sha256":
			s := sha256.Sum256([]byte(base))
			if rsa.VerifyPKCS1v15(k, crypto.SHA256, s[:], sig) == nil {
				return nil
			}
		default:
			return fmt.Errorf("algorithm %q does not fit the key", alg)
		}
		return errors.New("the signature does not verify")
	}
	return errors.New("unsupported key type")
}
