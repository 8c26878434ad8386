package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// api calls the API of the running `make run`, as the operator console
// (newConsole) or as a company (newCompanyAPI).
type api struct {
	// base is the API's base URL, http://127.0.0.1:3000/api/v1.
	base string
	// header authenticates each call: X-Admin-Key or Authorization.
	header, value string
	client        *http.Client
}

// newConsole returns a client of the operator console at base.
func newConsole(base, key string) *api {
	return &api{base: base, header: "X-Admin-Key", value: key, client: &http.Client{Timeout: 30 * time.Second}}
}

// newCompanyAPI returns a client of the API at base with a company's
// token.
func newCompanyAPI(base, token string) *api {
	return &api{base: base, header: "Authorization", value: "Bearer " + token, client: &http.Client{Timeout: 30 * time.Second}}
}

// webhookURL returns the company's webhook_url (GET /admin/companies/{id}).
func (c *api) webhookURL(ctx context.Context, company string) (string, error) {
	var data struct {
		WebhookURL string `json:"webhook_url"`
	}
	err := c.call(ctx, http.MethodGet, "/admin/companies/"+url.PathEscape(company), nil, &data)
	return data.WebhookURL, err
}

// setWebhookURL sets the company's webhook_url (PATCH /admin/companies/{id}).
func (c *api) setWebhookURL(ctx context.Context, company, webhookURL string) error {
	return c.call(ctx, http.MethodPatch, "/admin/companies/"+url.PathEscape(company), map[string]string{"webhook_url": webhookURL}, nil)
}

// rotateSecret makes the company a new webhook signing secret, replacing
// the one it had, and returns it (POST /admin/companies/{id}/webhook-secret).
func (c *api) rotateSecret(ctx context.Context, company string) (string, error) {
	var data struct {
		Secret string `json:"secret"`
	}
	if err := c.call(ctx, http.MethodPost, "/admin/companies/"+url.PathEscape(company)+"/webhook-secret", nil, &data); err != nil {
		return "", err
	}
	if data.Secret == "" {
		return "", fmt.Errorf("POST /admin/companies/%s/webhook-secret answered no secret", company)
	}
	return data.Secret, nil
}

// endpoint is a webhook endpoint as the API answers it.
type endpoint struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Console bool   `json:"console"`
	Secret  string `json:"secret"`
}

// replaceEndpoint deletes the company's endpoints at url (left by a listen
// that could not delete its own; never the console's, which a listen with
// COMPANY may have pointed there) and creates one for kinds, whose secret
// it returns with it (POST /webhooks/endpoints).
func (c *api) replaceEndpoint(ctx context.Context, url string, kinds []string) (endpoint, error) {
	var list []endpoint
	if err := c.call(ctx, http.MethodGet, "/webhooks/endpoints", nil, &list); err != nil {
		return endpoint{}, err
	}
	for _, e := range list {
		if e.URL == url && !e.Console {
			if err := c.deleteEndpoint(ctx, e.ID); err != nil {
				return endpoint{}, err
			}
		}
	}
	var e endpoint
	err := c.call(ctx, http.MethodPost, "/webhooks/endpoints", map[string]any{
		"url": url, "enabled_events": kinds, "description": "make listen",
	}, &e)
	if err == nil && e.Secret == "" {
		err = fmt.Errorf("POST /webhooks/endpoints answered no secret")
	}
	return e, err
}

// deleteEndpoint deletes one of the company's endpoints.
func (c *api) deleteEndpoint(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodDelete, "/webhooks/endpoints/"+url.PathEscape(id), nil, nil)
}

// call sends a request, with body as JSON when not nil, and decodes the
// answer's data into out when not nil.
func (c *api) call(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set(c.header, c.value)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is `make run` running?)", method, path, err)
	}
	defer resp.Body.Close()
	var env struct {
		Message string          `json:"message"`
		Code    string          `json:"code"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&env); err != nil {
		return fmt.Errorf("%s %s: %s, not the API's JSON: %w", method, path, resp.Status, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s: %s", method, path, resp.Status, env.Code, env.Message)
	}
	if out != nil {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("%s %s: data: %w", method, path, err)
		}
	}
	return nil
}
