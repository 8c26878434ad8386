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

// console calls the operator console API of the running `make run`.
type console struct {
	// base is the API's base URL, http://127.0.0.1:3000/api/v1.
	base string
	// key is the X-Admin-Key.
	key    string
	client *http.Client
}

// newConsole returns a console client of the API at base.
func newConsole(base, key string) *console {
	return &console{base: base, key: key, client: &http.Client{Timeout: 30 * time.Second}}
}

// webhookURL returns the company's webhook_url (GET /admin/companies/{id}).
func (c *console) webhookURL(ctx context.Context, company string) (string, error) {
	var data struct {
		WebhookURL string `json:"webhook_url"`
	}
	err := c.call(ctx, http.MethodGet, "/admin/companies/"+url.PathEscape(company), nil, &data)
	return data.WebhookURL, err
}

// setWebhookURL sets the company's webhook_url (PATCH /admin/companies/{id}).
func (c *console) setWebhookURL(ctx context.Context, company, webhookURL string) error {
	return c.call(ctx, http.MethodPatch, "/admin/companies/"+url.PathEscape(company), map[string]string{"webhook_url": webhookURL}, nil)
}

// rotateSecret makes the company a new webhook signing secret, replacing
// the one it had, and returns it (POST /admin/companies/{id}/webhook-secret).
func (c *console) rotateSecret(ctx context.Context, company string) (string, error) {
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

// call sends a console request, with body as JSON when not nil, and
// decodes the answer's data into out when not nil.
func (c *console) call(ctx context.Context, method, path string, body, out any) error {
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
	req.Header.Set("X-Admin-Key", c.key)
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
		return fmt.Errorf("%s %s: %s, not the console's JSON: %w", method, path, resp.Status, err)
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
