package checks

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// valuesYAML parses chart values written as YAML.
func valuesYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	v := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestValues(t *testing.T) {
	const token = "planted-token-value-0123456789"
	tunnel := "global: {codefresh: {accountId: acc1, userToken: {token: " + token + "}}}"
	byRef := "global: {codefresh: {accountId: acc1, userToken: {secretKeyRef: {name: cf-user-token, key: token}}}}"
	secret := func(data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {namespace: codefresh, name: cf-user-token}\ndata: " + data + "\n"
	}
	tests := []struct {
		name   string
		mode   AccessMode
		values string // "" = no values given
		yaml   []string
		want   outcome
	}{
		{"tunnel: token and accountId", AccessTunnel, tunnel, nil, outcome{StatusPass, []string{"values hold what tunnel mode requires (userToken, accountId)"}}},
		{"tunnel: no accountId", AccessTunnel, "global: {codefresh: {userToken: {token: " + token + "}}}", nil,
			outcome{StatusFail, []string{"global.codefresh.accountId is required for tunnel based runtime"}}},
		{"no userToken", AccessTunnel, "global: {codefresh: {accountId: acc1}}", nil,
			outcome{StatusFail, []string{"global.codefresh.userToken is mandatory", "kubectl create secret generic cf-user-token -n codefresh"}}},
		{"secretKeyRef to an existing key", AccessTunnel, byRef, []string{secret("{token: dG9rZW4=}")}, outcome{StatusPass, nil}},
		{"secretKeyRef, Secret missing", AccessTunnel, byRef, nil,
			outcome{StatusFail, []string{"Secret codefresh/cf-user-token does not exist"}}},
		{"secretKeyRef, key missing", AccessTunnel, byRef, []string{secret("{other: eA==}")},
			outcome{StatusFail, []string{`Secret codefresh/cf-user-token has no key "token"`}}},
		{"secretKeyRef, reserved name", AccessTunnel, "global: {codefresh: {accountId: a, userToken: {secretKeyRef: {name: codefresh-token, key: token}}}}", nil,
			outcome{StatusFail, []string{"codefresh-token is a reserved name"}}},
		{"ingress: no hosts", AccessIngress, tunnel, nil,
			outcome{StatusFail, []string{`"global.runtime.ingress.hosts" must contain the runtime host`}}},
		{"ingress: hosts and class", AccessIngress, "global: {codefresh: {accountId: acc1, userToken: {token: " + token + "}}, runtime: {ingress: {hosts: [rt.example.com]}}}", nil,
			outcome{StatusPass, []string{"values hold what ingress mode requires (userToken, ingress hosts[0], className, protocol)"}}},
		{"service-mesh: no ingressUrl", AccessServiceMesh, tunnel, nil,
			outcome{StatusFail, []string{"global.runtime.ingressUrl must be provided"}}},
		{"stale external-argo-cd", AccessTunnel, "global: {external-argo-cd: {}, codefresh: {accountId: acc1, userToken: {token: " + token + "}}}", nil,
			outcome{StatusWarn, []string{"global.external-argo-cd is set but the chart ignores it"}}},
		{"no values", AccessTunnel, "", nil, outcome{StatusSkip, []string{NotApplicable + "no values given"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Inputs{AccessMode: tt.mode, IngressClass: "nginx"}
			if tt.values != "" {
				in.Values = valuesYAML(t, tt.values)
			}
			r := newKit(t, tt.yaml...).with(in).run(Values())
			tt.want.expect(t, r)
			if strings.Contains(r.Message+r.Hint, token) {
				t.Errorf("the token is printed: %q / %q", r.Message, r.Hint)
			}
		})
	}
}
