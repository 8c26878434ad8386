package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// wallet is a funded XAF wallet in Cameroon of its own company.
type wallet struct {
	company, id, token string
}

// setUp makes n approved companies through the API, each with an access
// token and an XAF wallet in Cameroon credited with funding on its payout
// balance, as the README's walk-through does.
func (d *deployment) setUp(ctx context.Context, n int) ([]wallet, error) {
	ws := make([]wallet, n)
	for i := range ws {
		companyID, token, err := d.company(ctx, fmt.Sprintf("Load %d", i))
		if err != nil {
			return nil, err
		}
		var w struct {
			ID string `json:"id"`
		}
		if err := d.call(ctx, "POST", "/wallets", bearer(token), map[string]string{
			"currency": payoutCurrency, "country": "Cameroon", "country_iso_code": payoutCountry, "country_phone_code": "+237",
		}, http.StatusCreated, &w); err != nil {
			return nil, err
		}
		if err := d.credit(ctx, w.ID, funding); err != nil {
			return nil, err
		}
		ws[i] = wallet{company: companyID, id: w.ID, token: token}
	}
	return ws, nil
}

// company makes an approved company named name through the API and
// returns its id and an access token.
func (d *deployment) company(ctx context.Context, name string) (id, token string, err error) {
	admin := map[string]string{"X-Admin-Key": adminKey}
	var c struct {
		ID        string `json:"id"`
		ClientID  string `json:"client_id"`
		ClientKey string `json:"client_key"`
	}
	if err := d.call(ctx, "POST", "/admin/companies", admin, map[string]string{"name": name}, http.StatusCreated, &c); err != nil {
		return "", "", err
	}
	if err := d.call(ctx, "PATCH", "/admin/companies/"+c.ID, admin, map[string]string{"kyb_status": "APPROVED"}, http.StatusOK, nil); err != nil {
		return "", "", err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := d.call(ctx, "POST", "/auth/token", nil, map[string]string{"client_id": c.ClientID, "client_key": c.ClientKey}, http.StatusOK, &tok); err != nil {
		return "", "", err
	}
	return c.ID, tok.AccessToken, nil
}

// credit credits amount (major units) to the payout balance of wallet id,
// as the operator does.
func (d *deployment) credit(ctx context.Context, id string, amount int64) error {
	return d.call(ctx, "POST", "/admin/wallets/"+id+"/credit", map[string]string{"X-Admin-Key": adminKey}, map[string]any{
		"balance": "payout", "amount": amount, "reference": "loadtest-funding",
	}, http.StatusOK, nil)
}

// bearer is the header that presents token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// call sends one JSON request of the set-up and decodes the answer's data
// (or, for the token, the whole answer) into out.
func (d *deployment) call(ctx context.Context, method, path string, header map[string]string, body any, want int, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return d.send(ctx, method, path, header, "application/json", b, want, out)
}

// send is call with a body of its own content type.
func (d *deployment) send(ctx context.Context, method, path string, header map[string]string, contentType string, body []byte, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("set-up: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("set-up: %s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("set-up: %s %s: %w", method, path, err)
	}
	if env.Data == nil {
		env.Data = raw
	}
	return json.Unmarshal(env.Data, out)
}
