package devserver

import (
	"maps"
	"testing"
)

func TestRouteTableMatch(t *testing.T) {
	routes := []Route{
		{Method: "GET", Path: "/api/v1/wallet/transactions/{id}", Function: "byID"},
		{Method: "GET", Path: "/api/v1/wallet/transactions/wallet/{walletId}", Function: "byWallet"},
		{Method: "GET", Path: "/api/v1/wallet/transactions", Function: "list"},
		{Method: "POST", Path: "/api/v1/wallets", Function: "create"},
		{Method: "ANY", Path: "/api/v1/wallets", Function: "anyWallets"},
		{Method: "GET", Path: "/api/v1/files/{proxy+}", Function: "files"},
		{Method: "GET", Path: "/api/v1/files/readme", Function: "readme"},
		{Method: "GET", Path: "/api/v1/{a}/{b}", Function: "params"},
	}
	tests := []struct {
		method, path string
		function     string // "" = no match
		params       map[string]string
	}{
		{"GET", "/api/v1/wallet/transactions", "list", nil},
		{"GET", "/api/v1/wallet/transactions/tx1", "byID", map[string]string{"id": "tx1"}},
		{"GET", "/api/v1/wallet/transactions/wallet", "byID", map[string]string{"id": "wallet"}},
		{"GET", "/api/v1/wallet/transactions/wallet/w1", "byWallet", map[string]string{"walletId": "w1"}},
		{"GET", "/api/v1/wallet/transactions/a%20b", "byID", map[string]string{"id": "a b"}},
		{"GET", "/api/v1/wallet/transactions/", "", nil},
		{"GET", "/api/v1/wallet/transactions/tx1/extra", "", nil},
		{"POST", "/api/v1/wallets", "create", nil},
		{"DELETE", "/api/v1/wallets", "anyWallets", nil},
		{"POST", "/api/v1/wallet/transactions", "", nil},
		{"GET", "/api/v1/files/readme", "readme", nil},
		{"GET", "/api/v1/files/a/b/c", "files", map[string]string{"proxy": "a/b/c"}},
		{"GET", "/api/v1/files", "", nil},
		{"GET", "/api/v1/files/", "", nil},
		{"GET", "/api/v1/x/y", "params", map[string]string{"a": "x", "b": "y"}},
		{"GET", "/nope", "", nil},
		{"GET", "", "", nil},
	}
	table, err := newRouteTable(routes)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r, params := table.match(tt.method, tt.path)
			got := ""
			if r != nil {
				got = r.Function
			}
			if got != tt.function {
				t.Fatalf("matched %q, want %q", got, tt.function)
			}
			if r != nil && !maps.Equal(params, tt.params) {
				t.Errorf("params = %v, want %v", params, tt.params)
			}
		})
	}
}

func TestRouteTableDefault(t *testing.T) {
	table, err := newRouteTable([]Route{
		{Method: "GET", Path: "/a", Function: "a"},
		{Path: "$default", Function: "fallback"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/a": "a", "/b": "fallback"} {
		if r, _ := table.match("GET", path); r == nil || r.Function != want {
			t.Errorf("GET %s matched %v, want %s", path, r, want)
		}
	}
}

func TestRouteTableRejects(t *testing.T) {
	tests := map[string][]Route{
		"duplicate":       {{Method: "GET", Path: "/a", Function: "x"}, {Method: "GET", Path: "/a", Function: "y"}},
		"relative":        {{Method: "GET", Path: "a", Function: "x"}},
		"greedy not last": {{Method: "GET", Path: "/{p+}/a", Function: "x"}},
		"partial param":   {{Method: "GET", Path: "/a{id}", Function: "x"}},
	}
	for name, routes := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := newRouteTable(routes); err == nil {
				t.Error("accepted")
			}
		})
	}
}
