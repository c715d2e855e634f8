// Package platform makes the Codefresh platform calls the gitops-runtime
// chart's validation hooks make, as codefresh-io/go-sdk sends them: a
// GraphQL POST to <url>/2.0/api/graphql with the token as the
// Authorization header (Client.Query), and the hooks' three queries
// (Me, Runtime, Limits). The queries are go-sdk's
// (https://github.com/codefresh-io/go-sdk/blob/1774674c42dae8abe227e057a9bda04580b1bb0e/pkg/codefresh/internal/v2/user.go,
// .../v2/runtime.go; https://github.com/codefresh-io/go-sdk/blob/46b357344af2627c56d1ecbdd6b052e26ee26f21/pkg/graphql/payments.go),
// as `cf helm validate` and `cf account validate-usage` call them
// (https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go,
// https://github.com/codefresh-io/cli-v2/blob/0b95f7dac6782eeae9b3e62f00bd189ada006ed0/cmd/commands/account.go).
package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// GraphQLPath is where the platform answers GraphQL, under its URL
// (global.codefresh.url).
const GraphQLPath = "/2.0/api/graphql"

const (
	queryMe = `
query Me {
	me {
		id
		name
		email
		isAdmin
		accounts {
			id
			name
		}
		activeAccount {
			id
			name
			gitProvider
			gitApiUrl
			sharedConfigRepo
			admins
		}
	}
}`
	queryRuntime = `
query GetRuntime($name: String!) {
	runtime(name: $name) {
		metadata {
			name
			namespace
		}
	}
}`
	queryLimits = `
query LimitsStatus {
  limitsStatus {
    usage {
      clusters
      applications
    }
    limits {
      clusters
      applications
    }
    status
  }
}`
)

// Client is a GraphQL client of the Codefresh platform, as go-sdk's.
type Client struct {
	http       *http.Client
	url, token string
}

// New returns a client of the platform at base (global.codefresh.url)
// sending token, through hc.
func New(hc *http.Client, base *url.URL, token string) *Client {
	return &Client{http: hc, url: base.JoinPath(GraphQLPath).String(), token: token}
}

// Query posts a GraphQL query and decodes the one data field into out. err
// is a transport error (no answer); refused is the platform's refusal in the
// words go-sdk gives it ("[401] - failed to make a GraphQL API request: ..."
// or the GraphQL errors), "" when it answered.
func (c *Client) Query(ctx context.Context, q string, vars map[string]any, out any) (refused string, err error) {
	if vars == nil {
		vars = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", req.URL.Host)
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= 400 {
		return fmt.Sprintf("[%d] - failed to make a GraphQL API request: %s", resp.StatusCode, oneLine(string(raw), 200)), nil
	}
	return decode(raw, out), nil
}

// decode reads a GraphQL answer: its first data field into out, and its
// errors; it returns the refusal ("" for none).
func decode(raw []byte, out any) string {
	var wrapper struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &wrapper); err != nil {
		return fmt.Sprintf("failed to unmarshal response Body: %v", err)
	}
	for _, d := range wrapper.Data {
		if len(d) > 0 && string(d) != "null" {
			if err := json.Unmarshal(d, out); err != nil {
				return fmt.Sprintf("failed to unmarshal response Body: %v", err)
			}
		}
		break
	}
	if len(wrapper.Errors) > 0 {
		msgs := make([]string, len(wrapper.Errors))
		for i, e := range wrapper.Errors {
			msgs[i] = e.Message
		}
		return strings.Join(msgs, "; ")
	}
	return ""
}

// oneLine is s on one line, cut at n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Me is the token's user as the Me query answers.
type Me struct {
	Name          string `json:"name"`
	IsAdmin       *bool  `json:"isAdmin"`
	ActiveAccount struct {
		ID   string  `json:"id"`
		Name *string `json:"name"`
	} `json:"activeAccount"`
}

// Admin reports whether the user is an admin of its active account.
func (m Me) Admin() bool { return m.IsAdmin != nil && *m.IsAdmin }

// Account is the name of the user's active account ("" when unnamed).
func (m Me) Account() string {
	if m.ActiveAccount.Name != nil {
		return *m.ActiveAccount.Name
	}
	return ""
}

// Me asks who the token's user is (Query's refused and err).
func (c *Client) Me(ctx context.Context) (Me, string, error) {
	var me Me
	r, err := c.Query(ctx, queryMe, nil, &me)
	return me, r, err
}

// Runtime asks for the runtime named name: found is whether the platform
// knows it; refused is the platform's refusal otherwise ("" when it just
// answered none; Query's err).
func (c *Client) Runtime(ctx context.Context, name string) (found bool, refused string, err error) {
	var rt struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	r, err := c.Query(ctx, queryRuntime, map[string]any{"name": name}, &rt)
	if err != nil {
		return false, "", err
	}
	if rt.Metadata.Name != "" {
		return true, "", nil
	}
	return false, r, nil
}

// Limits is the account's usage and limits as LimitsStatus answers; a nil
// count is one the platform did not give.
type Limits struct {
	Usage  *struct{ Clusters *int } `json:"usage"`
	Limits *struct{ Clusters *int } `json:"limits"`
}

// Limits asks for the account's usage and limits (Query's refused and
// err).
func (c *Client) Limits(ctx context.Context) (Limits, string, error) {
	var ls Limits
	r, err := c.Query(ctx, queryLimits, nil, &ls)
	return ls, r, err
}
