package authhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"payments/pkg/auth"
	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// Routes registers the auth function's routes, none of which takes a
// token: POST /auth/token, and the public keys that check tokens, GET
// /.well-known/jwks.json, named by GET /.well-known/openid-configuration.
func Routes(rt *httpapi.Router, svc *auth.Service) {
	rt.Handle("POST /auth/token", func(w http.ResponseWriter, r *http.Request) error {
		return tokenHandler(svc, w, r)
	})
	rt.Handle("GET /.well-known/jwks.json", func(w http.ResponseWriter, r *http.Request) error {
		writePublic(w, svc.JWKS())
		return nil
	})
	rt.Handle("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) error {
		writePublic(w, discovery(svc, r))
		return nil
	})
}

// PublicMaxAge is how long a client or cache may keep the published keys
// (Cache-Control max-age, in seconds): a key published by a rotation is
// published this long before any token is signed with it (docs/auth.md).
const PublicMaxAge = 300

// writePublic writes v as a cacheable answer: it holds no secret.
func writePublic(w http.ResponseWriter, v any) {
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", PublicMaxAge))
	httpapi.Write(w, http.StatusOK, v)
}

// Discovery is the body of GET /.well-known/openid-configuration: the
// part of OpenID Connect Discovery 1.0 a JWT verifier (the HTTP API's JWT
// authorizer) reads.
type Discovery struct {
	Issuer                 string   `json:"issuer"`
	JWKSURI                string   `json:"jwks_uri"`
	TokenEndpoint          string   `json:"token_endpoint"`
	SigningAlgs            []string `json:"id_token_signing_alg_values_supported"`
	ResponseTypes          []string `json:"response_types_supported"`
	SubjectTypes           []string `json:"subject_types_supported"`
	TokenEndpointAuthMeths []string `json:"token_endpoint_auth_methods_supported"`
}

// discovery returns the discovery document. Its URLs are under the
// issuer when the issuer is the API's base URL, else under the base URL
// of the request.
func discovery(s *auth.Service, r *http.Request) Discovery {
	base := s.Issuer()
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		scheme := "https"
		if r.TLS == nil && r.Header.Get("X-Forwarded-Proto") == "http" {
			scheme = "http"
		}
		base = scheme + "://" + r.Host + httpapi.BasePath
	}
	return Discovery{
		Issuer:                 s.Issuer(),
		JWKSURI:                base + "/.well-known/jwks.json",
		TokenEndpoint:          base + "/auth/token",
		SigningAlgs:            []string{auth.Algorithm},
		ResponseTypes:          []string{"token"},
		SubjectTypes:           []string{"public"},
		TokenEndpointAuthMeths: []string{"client_secret_post"},
	}
}

type tokenRequest struct {
	ClientID  string `json:"client_id"`
	ClientKey string `json:"client_key"`
}

// missingCredentials is the spec's message for a missing or empty field.
const missingCredentials = "missing or empty client_id or client_key"

func tokenHandler(svc *auth.Service, w http.ResponseWriter, r *http.Request) error {
	// The limit is charged before the body is read: every request counts,
	// and a refused one costs no credential check.
	now := svc.Now()
	if err := svc.Admit(r.Context(), httpapi.SourceIP(r), now); err != nil {
		return err // a *RateLimitError: its Retry-After is written with it
	}
	var req tokenRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	switch {
	case req.ClientID == "":
		return field.Invalid("client_id", missingCredentials)
	case req.ClientKey == "":
		return field.Invalid("client_key", missingCredentials)
	}
	tok, err := svc.IssueAt(r.Context(), req.ClientID, req.ClientKey, now)
	if err != nil {
		return err
	}
	httpapi.Write(w, http.StatusOK, tok) // Cache-Control no-store, as every answer of the router
	return nil
}

// Guard returns the middleware of every company route: it admits a request
// carrying one "Authorization: Bearer <token>" with a valid token and puts
// the token's company id and the company's client_id in the request
// context (httpapi.WithCompany, httpapi.WithClient).
// Anything else, two Authorization headers included, is
// httpapi.ErrUnauthorized.
func Guard(s *auth.Service) httpapi.Guard {
	return func(r *http.Request) (context.Context, error) {
		header, err := httpapi.Credential(r, "Authorization")
		if err != nil {
			return nil, err
		}
		c, err := s.AuthenticateCompany(r.Context(), header)
		if errors.Is(err, auth.ErrUnauthorized) {
			return nil, fmt.Errorf("%w: %w", httpapi.ErrUnauthorized, err)
		}
		if err != nil {
			return nil, err
		}
		return httpapi.WithClient(httpapi.WithCompany(r.Context(), c.ID), c.ClientID), nil
	}
}
