package platform

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// stub answers the GraphQL queries with answer (by query name), or with
// status; it records the Authorization headers it gets.
type stub struct {
	answer map[string]string
	status int
	auths  []string
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	if r.URL.Path != GraphQLPath || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.NotFound(w, r)
		return
	}
	if s.status != 0 {
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte("{\"message\":\n  \"Unauthorized\"}"))
		return
	}
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	for name, a := range s.answer {
		if strings.Contains(req.Query, "query "+name) {
			_, _ = w.Write([]byte(a))
			return
		}
	}
	_, _ = w.Write([]byte(`{"data": null}`))
}

func client(t *testing.T, s *stub) *Client {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return New(srv.Client(), u, "tok")
}

func TestCalls(t *testing.T) {
	s := &stub{answer: map[string]string{
		"Me":           `{"data": {"me": {"name": "dev", "isAdmin": true, "activeAccount": {"id": "a1", "name": "acme"}}}}`,
		"GetRuntime":   `{"data": {"runtime": {"metadata": {"name": "rt1"}}}}`,
		"LimitsStatus": `{"data": {"limitsStatus": {"usage": {"clusters": 2}, "limits": {"clusters": null}}}}`,
	}}
	c := client(t, s)
	ctx := context.Background()
	me, r, err := c.Me(ctx)
	if err != nil || r != "" || me.Name != "dev" || !me.Admin() || me.Account() != "acme" || me.ActiveAccount.ID != "a1" {
		t.Errorf("Me: %+v, %q, %v", me, r, err)
	}
	if found, r, err := c.Runtime(ctx, "rt1"); !found || r != "" || err != nil {
		t.Errorf("Runtime: %v, %q, %v", found, r, err)
	}
	ls, r, err := c.Limits(ctx)
	if err != nil || r != "" || ls.Usage == nil || *ls.Usage.Clusters != 2 || ls.Limits == nil || ls.Limits.Clusters != nil {
		t.Errorf("Limits: %+v, %q, %v", ls, r, err)
	}
	for _, a := range s.auths {
		if a != "tok" {
			t.Errorf("Authorization %q, want the token", a)
		}
	}
	if (Me{}).Admin() || (Me{}).Account() != "" {
		t.Error("a user the platform does not call an admin is none")
	}
}

// TestRefusals: the platform's refusals in go-sdk's words.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	if _, r, err := client(t, &stub{status: http.StatusUnauthorized}).Me(ctx); err != nil || r != `[401] - failed to make a GraphQL API request: {"message": "Unauthorized"}` {
		t.Errorf("401: %q, %v", r, err)
	}
	c := client(t, &stub{answer: map[string]string{
		"GetRuntime": `{"data": {"runtime": null}, "errors": [{"message": "runtime \"x\" does not exist"}, {"message": "second"}]}`,
		"Me":         `not json`,
	}})
	if found, r, err := c.Runtime(ctx, "x"); found || err != nil || r != `runtime "x" does not exist; second` {
		t.Errorf("GraphQL errors: %v, %q, %v", found, r, err)
	}
	if _, r, _ := c.Me(ctx); !strings.HasPrefix(r, "failed to unmarshal response Body: ") {
		t.Errorf("not JSON: %q", r)
	}
	if found, r, err := client(t, &stub{}).Runtime(ctx, "y"); found || r != "" || err != nil {
		t.Errorf("no runtime: %v, %q, %v", found, r, err)
	}
	u, _ := url.Parse("http://127.0.0.1:1")
	if _, _, err := New(http.DefaultClient, u, "tok").Me(ctx); err == nil || strings.Contains(err.Error(), "127.0.0.1:1/2.0") {
		t.Errorf("no answer: %v (the URL left out of the error)", err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\n  b\tc", 3); got != "a b…" {
		t.Errorf("%q", got)
	}
}
