package checks

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// platformStub answers the hooks' GraphQL queries as the Codefresh
// platform does, per scenario; it records the Authorization it was given.
type platformStub struct {
	admin      bool
	account    string
	runtimes   map[string]bool
	usage, lim *int
	status     int           // HTTP status to answer with (0 = 200)
	delay      time.Duration // before answering
	mu         sync.Mutex    // guards gotAuth: a timed-out request's handler still runs
	gotAuth    []string
}

// auths returns the Authorization headers received so far.
func (s *platformStub) auths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gotAuth...)
}

func (s *platformStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.gotAuth = append(s.gotAuth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	time.Sleep(s.delay)
	if r.URL.Path != "/2.0/api/graphql" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if s.status != 0 {
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(`{"message":"Unauthorized"}`))
		return
	}
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	var data any
	switch {
	case strings.Contains(req.Query, "query Me"):
		data = map[string]any{"me": map[string]any{"id": "u1", "name": "dev", "isAdmin": s.admin,
			"activeAccount": map[string]any{"id": s.account, "name": "acme"}}}
	case strings.Contains(req.Query, "query GetRuntime"):
		name, _ := req.Variables["name"].(string)
		if s.runtimes[name] {
			data = map[string]any{"runtime": map[string]any{"metadata": map[string]any{"name": name, "namespace": "cf"}}}
		} else {
			data = map[string]any{"runtime": nil}
		}
	case strings.Contains(req.Query, "query LimitsStatus"):
		data = map[string]any{"limitsStatus": map[string]any{"usage": map[string]any{"clusters": s.usage}, "limits": map[string]any{"clusters": s.lim}}}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func intp(i int) *int { return &i }

// TestPlatformUserToken: each platform answer the hooks fail on, quoted; a
// pass only when every call answered well; no answer is a skip; the token
// goes only to the platform, never into the result.
func TestPlatformUserToken(t *testing.T) {
	const token = "user-token-1f2e3d"
	good := func() *platformStub {
		return &platformStub{admin: true, account: "acc1", runtimes: map[string]bool{"other": true}, usage: intp(1), lim: intp(3)}
	}
	vals := map[string]any{"global": map[string]any{"codefresh": map[string]any{"userToken": map[string]any{"token": token}}}}
	in := Inputs{Namespace: "cf", RuntimeName: "rt1", AccountID: "acc1", Values: vals, RenderValues: vals, PlainUserToken: true, UserToken: token}
	tests := []struct {
		name string
		stub func(*platformStub)
		in   func(*Inputs)
		want outcome
	}{
		{"all good", nil, nil, outcome{StatusPass, []string{"user dev is Admin in account acme (acc1)", `runtime name "rt1" is free`, "clusters usage 1 of 3"}}},
		{"name taken", func(s *platformStub) { s.runtimes["rt1"] = true }, nil, outcome{StatusFail, []string{`runtime "rt1" already exists`}}},
		{"not admin", func(s *platformStub) { s.admin = false }, nil, outcome{StatusFail, []string{`user "dev" does not have Admin role in account "acme"`}}},
		{"other account", func(s *platformStub) { s.account = "acc2" }, nil, outcome{StatusFail, []string{`account mismatch - userToken is for accountId acc2 ("acme"), while "global.codefresh.accountId" is acc1`}}},
		{"limit reached", func(s *platformStub) { s.usage = intp(3) }, nil, outcome{StatusFail, []string{"clusters limit reached: usage=3, limit=3"}}},
		{"no limit", func(s *platformStub) { s.lim = nil }, nil, outcome{StatusPass, []string{"no cluster limit"}}},
		{"usage not validated", func(s *platformStub) { s.usage = intp(9) }, func(in *Inputs) { in.SkipUsageValidation = true }, outcome{StatusPass, []string{"is free"}}},
		{"401", func(s *platformStub) { s.status = http.StatusUnauthorized }, nil, outcome{StatusFail, []string{"failed getting current user: [401] - failed to make a GraphQL API request"}}},
		{"timeout", func(s *platformStub) { s.delay = 1500 * time.Millisecond }, nil, outcome{StatusSkip, []string{"the platform did not answer"}}},
		{"no token", nil, func(in *Inputs) { in.Values, in.RenderValues, in.PlainUserToken, in.UserToken = nil, nil, false, "" }, outcome{StatusSkip, []string{"no global.codefresh.userToken"}}},
		{"hooks skipped", nil, func(in *Inputs) { in.SkipValidation, in.SkipUsageValidation = true, true }, outcome{StatusSkip, []string{"renders no validation hook"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := good()
			if tt.stub != nil {
				tt.stub(stub)
			}
			srv := httptest.NewTLSServer(stub)
			defer srv.Close()
			in := in
			in.PlatformURL = srv.URL
			if tt.in != nil {
				tt.in(&in)
			}
			env := newKit(t).with(in).env()
			p, err := probe.New(time.Second, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			p.Roots.AddCert(srv.Certificate())
			env.Probe = p
			r := runThrough(t, PlatformUserToken(), env)
			tt.want.expect(t, r)
			if strings.Contains(r.Message+r.Hint, token) {
				t.Error("the token appears in the result")
			}
			for _, a := range stub.auths() {
				if a != token {
					t.Errorf("Authorization %q, want the user token", a)
				}
			}
		})
	}
}

// TestPlatformUserTokenFromSecret: the token from its secretKeyRef, as the
// hook reads it; a leftover runtime token switches the hook's mode.
func TestPlatformUserTokenFromSecret(t *testing.T) {
	stub := &platformStub{admin: true, account: "acc1", runtimes: map[string]bool{"other": true}, usage: intp(1), lim: intp(3)}
	srv := httptest.NewTLSServer(stub)
	defer srv.Close()
	ref := Inputs{Namespace: "cf", RuntimeName: "rt1", AccountID: "acc1", PlatformURL: srv.URL, UserTokenSecret: "cf-user", UserTokenKey: "token"}
	userSecret := "apiVersion: v1\nkind: Secret\nmetadata: {namespace: cf, name: cf-user}\ndata: {token: " + "dXNlci10b2tlbi1mcm9tLXNlY3JldA==" + "}\n"
	for _, c := range []struct {
		docs []string
		want outcome
	}{
		{[]string{userSecret}, outcome{StatusPass, []string{"is free"}}},
		{[]string{userSecret, tokenSecret("cf", "runtime-token-xyz")}, outcome{StatusFail, []string{"runtime-token mode", `runtime "rt1" does not exist`, "failed getting runtime from platform"}}},
		{nil, outcome{StatusSkip, []string{`Secret cf/cf-user has no key "token"`}}},
	} {
		stub.gotAuth = nil
		env := newKit(t, c.docs...).with(ref).env()
		p, _ := probe.New(time.Second, nil, "")
		p.Roots.AddCert(srv.Certificate())
		env.Probe = p
		r := runThrough(t, PlatformUserToken(), env)
		c.want.expect(t, r)
		if c.want.status == StatusPass && (len(stub.gotAuth) == 0 || stub.gotAuth[0] != "user-token-from-secret") {
			t.Errorf("Authorization %v, want the Secret's token", stub.gotAuth)
		}
	}
}

// TestPlatformUserTokenRuntimeTokenMode: with a codefresh-token Secret the
// hook only asks the platform for the runtime, with that token: known
// passes, unknown fails with the hook's words; in --upgrade the same.
func TestPlatformUserTokenRuntimeTokenMode(t *testing.T) {
	stub := &platformStub{runtimes: map[string]bool{"rt1": true}}
	srv := httptest.NewTLSServer(stub)
	defer srv.Close()
	for _, c := range []struct {
		runtime string
		mode    Mode
		want    outcome
	}{
		{"rt1", ModePre, outcome{StatusPass, []string{"runtime-token mode", `the platform knows runtime "rt1"`}}},
		{"gone", ModePre, outcome{StatusFail, []string{"runtime-token mode", "failed getting runtime from platform"}}},
		{"rt1", ModeUpgrade, outcome{StatusPass, []string{"runtime-token mode", `the platform knows runtime "rt1"`}}},
	} {
		in := Inputs{Namespace: "cf", RuntimeName: c.runtime, AccountID: "acc1", PlatformURL: srv.URL, UserToken: "user-token"}
		env := newKit(t, tokenSecret("cf", "the-runtime-token")).with(in).env()
		env.Mode = c.mode
		p, _ := probe.New(time.Second, nil, "")
		p.Roots.AddCert(srv.Certificate())
		env.Probe = p
		r := runThrough(t, PlatformUserToken(), env)
		c.want.expect(t, r)
		if strings.Contains(r.Message+r.Hint, "the-runtime-token") {
			t.Error("the runtime token appears in the result")
		}
	}
	for _, a := range stub.auths() {
		if a != "the-runtime-token" {
			t.Errorf("Authorization %q, want the runtime token", a)
		}
	}
}
