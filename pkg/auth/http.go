package auth

import (
	"errors"
	"net/http"
	"strconv"

	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// Routes registers POST /auth/token, the one company route without a token.
func Routes(rt *httpapi.Router, svc *Service) {
	rt.Handle("POST /auth/token", func(w http.ResponseWriter, r *http.Request) error {
		return tokenHandler(svc, w, r)
	})
}

type tokenRequest struct {
	ClientID  string `json:"client_id"`
	ClientKey string `json:"client_key"`
}

// missingCredentials is the spec's message for a missing or empty field.
const missingCredentials = "missing or empty client_id or client_key"

func tokenHandler(svc *Service, w http.ResponseWriter, r *http.Request) error {
	// The limit is charged before the body is read: every request counts,
	// and a refused one costs no credential check.
	now := svc.Now()
	if err := svc.admit(r.Context(), httpapi.SourceIP(r), now); err != nil {
		var rl *RateLimitError
		if errors.As(err, &rl) {
			w.Header().Set("Retry-After", strconv.Itoa(rl.RetryAfterSeconds()))
		}
		return err
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
	tok, err := svc.issue(r.Context(), req.ClientID, req.ClientKey, now)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.Write(w, http.StatusOK, tok)
	return nil
}
