package cognitotest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
)

var memoryOnce sync.Once

// MemoryCognito starts, once per process, an in-memory stand-in of the
// few Cognito operations the functions and the harness make (pools,
// groups and clients as cognitopool.Provision makes them, AdminCreateUser,
// AdminAddUserToGroup, AdminDeleteUser) and points EndpointEnv at it for
// the rest of the process: the functions' tests in `go test -short` runs
// (make test-unit), where there is no cognito-local. It keeps users by
// pool and email and refuses a second user of an email
// (UsernameExistsException), an unknown pool, group or user; it checks no
// password and signs nobody in: the adapter's own tests run against
// cognito-local (make test).
func MemoryCognito() {
	memoryOnce.Do(func() {
		srv := httptest.NewServer(&memory{pools: map[string]*memoryPool{}})
		os.Setenv(EndpointEnv, srv.URL)
	})
}

type memory struct {
	mu    sync.Mutex
	pools map[string]*memoryPool
}

type memoryPool struct {
	name    string
	groups  map[string]bool
	clients map[string]string    // id → name
	users   map[string]*struct{} // by email
	members map[string]map[string]bool
}

func (m *memory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var in struct {
		UserPoolId, PoolName, GroupName, ClientName, Username string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, "InvalidParameterException", err.Error())
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.pools[in.UserPoolId]
	if p == nil && op != "CreateUserPool" && op != "ListUserPools" {
		fail(w, "ResourceNotFoundException", "no pool "+in.UserPoolId)
		return
	}
	var out any = map[string]any{}
	switch op {
	case "ListUserPools":
		var pools []map[string]string
		for id, p := range m.pools {
			pools = append(pools, map[string]string{"Id": id, "Name": p.name})
		}
		out = map[string]any{"UserPools": pools}
	case "CreateUserPool":
		id := "us-east-1_" + random()
		m.pools[id] = &memoryPool{name: in.PoolName, groups: map[string]bool{}, clients: map[string]string{},
			users: map[string]*struct{}{}, members: map[string]map[string]bool{}}
		out = map[string]any{"UserPool": map[string]string{"Id": id, "Name": in.PoolName}}
	case "DeleteUserPool":
		delete(m.pools, in.UserPoolId)
	case "ListGroups":
		var groups []map[string]string
		for g := range p.groups {
			groups = append(groups, map[string]string{"GroupName": g})
		}
		out = map[string]any{"Groups": groups}
	case "CreateGroup":
		p.groups[in.GroupName] = true
		out = map[string]any{"Group": map[string]string{"GroupName": in.GroupName}}
	case "ListUserPoolClients":
		var clients []map[string]string
		for id, name := range p.clients {
			clients = append(clients, map[string]string{"ClientId": id, "ClientName": name})
		}
		out = map[string]any{"UserPoolClients": clients}
	case "CreateUserPoolClient":
		id := random()
		p.clients[id] = in.ClientName
		out = map[string]any{"UserPoolClient": map[string]string{"ClientId": id, "ClientName": in.ClientName}}
	case "AdminCreateUser":
		if p.users[in.Username] != nil {
			fail(w, "UsernameExistsException", "An account with the given email already exists.")
			return
		}
		p.users[in.Username] = &struct{}{}
		out = map[string]any{"User": map[string]string{"Username": in.Username, "UserStatus": "FORCE_CHANGE_PASSWORD"}}
	case "AdminAddUserToGroup":
		switch {
		case p.users[in.Username] == nil:
			fail(w, "UserNotFoundException", "User does not exist.")
			return
		case !p.groups[in.GroupName]:
			fail(w, "ResourceNotFoundException", "Group not found.")
			return
		}
		if p.members[in.GroupName] == nil {
			p.members[in.GroupName] = map[string]bool{}
		}
		p.members[in.GroupName][in.Username] = true
	case "AdminDeleteUser":
		if p.users[in.Username] == nil {
			fail(w, "UserNotFoundException", "User does not exist.")
			return
		}
		delete(p.users, in.Username)
		for _, m := range p.members {
			delete(m, in.Username)
		}
	default:
		fail(w, "InvalidActionException", "the in-memory Cognito does not serve "+op+": run the test with `make test`")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}

func fail(w http.ResponseWriter, code, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": message})
}

func random() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
