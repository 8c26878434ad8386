package webhooks_test

import (
	"errors"
	"testing"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/webhooks"
)

func TestCheckEndpointURL(t *testing.T) {
	tests := []struct {
		url           string
		allowLoopback bool
		ok            bool
	}{
		{"https://hooks.example.com/in", false, true},
		{"https://hooks.example.com:8443/in?x=1", false, true},
		{"https://203.0.114.9/in", false, true},
		{"http://hooks.example.com/in", false, false},
		{"https:///in", false, false},
		{"https://u:p@hooks.example.com/in", false, false},
		{"hooks.example.com/in", false, false},
		{"https://10.1.2.3/in", false, false},
		{"https://192.168.0.1/in", false, false},
		{"https://169.254.169.254/latest/meta-data", false, false},
		{"https://[fd00:ec2::254]/", false, false},
		{"https://[::ffff:10.0.0.1]/", false, false},
		{"https://127.0.0.1:8443/", false, false},
		{"https://127.0.0.1:8443/", true, true},
		{"https://localhost:8443/", false, false},
		{"https://api.LOCALHOST/", false, false},
		{"https://localhost:8443/", true, true},
		{"https://10.1.2.3/in", true, false},
		{"https://hooks.example.com/" + string(make([]byte, 2100)), false, false},
	}
	for _, tt := range tests {
		err := webhooks.CheckEndpointURL(tt.url, tt.allowLoopback)
		var fe *field.Error
		if (err == nil) != tt.ok || (err != nil && (!errors.As(err, &fe) || fe.Field != "url")) {
			t.Errorf("CheckEndpointURL(%.60q, %v) = %v", tt.url, tt.allowLoopback, err)
		}
	}
}

func TestEndpointReceivesAndSigns(t *testing.T) {
	now := time.Now()
	e := webhooks.Endpoint{URL: "https://x", Status: webhooks.EndpointEnabled, EnabledEvents: []string{"card.fund"}, Secret: "s1"}
	for _, tt := range []struct {
		change func(*webhooks.Endpoint)
		kind   events.Kind
		want   bool
	}{
		{func(*webhooks.Endpoint) {}, events.CardFund, true},
		{func(*webhooks.Endpoint) {}, events.CardWithdraw, false},
		{func(e *webhooks.Endpoint) { e.EnabledEvents = []string{webhooks.AllEvents} }, events.CardWithdraw, true},
		{func(e *webhooks.Endpoint) { e.Status = webhooks.EndpointDisabled }, events.CardFund, false},
		{func(e *webhooks.Endpoint) { e.URL = "" }, events.CardFund, false},
	} {
		c := e
		tt.change(&c)
		if got := c.Receives(tt.kind); got != tt.want {
			t.Errorf("%+v receives %s: %v", c, tt.kind, got)
		}
	}
	body := []byte(`{}`)
	for _, tt := range []struct {
		prev    string
		expires time.Time
		want    string
	}{
		{"", time.Time{}, webhooks.Sign("s1", now, body)},
		{"s0", now.Add(time.Second), webhooks.Sign("s1", now, body) + "," + webhooks.Sign("s0", now, body)[len("t=")+len("1234567890")+1:]},
		{"s0", now, webhooks.Sign("s1", now, body)},
	} {
		c := e
		c.PreviousSecret, c.PreviousExpiresAt = tt.prev, tt.expires
		if got := c.Sign(now, body); got != tt.want {
			t.Errorf("Sign with previous %q until %v = %s, want %s", tt.prev, tt.expires, got, tt.want)
		}
	}
	if got := (webhooks.Endpoint{}).Sign(now, body); got != "" {
		t.Errorf("no secret signs %q", got)
	}
}
