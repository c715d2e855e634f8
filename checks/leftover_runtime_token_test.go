package checks

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"

	rspb "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime"
)

func tokenSecret(ns, token string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata: {namespace: " + ns + ", name: codefresh-token}\ndata: {token: \"" + base64.StdEncoding.EncodeToString([]byte(token)) + "\"}\n"
}

// TestLeftoverRuntimeToken: a codefresh-token Secret with a token and no
// release in the namespace is judged by asking the platform with it, as
// the hook does: the runtime gone fails, saying what the hook will do;
// the runtime known passes (a reinstall); no answer warns naming both
// outcomes. The runtime's own (a release there), an empty one and a
// skipped hook pass. The token never appears in the result.
func TestLeftoverRuntimeToken(t *testing.T) {
	const token = "rt-token-9a8b7c"
	stub := &platformStub{runtimes: map[string]bool{"known": true}}
	srv := httptest.NewTLSServer(stub)
	defer srv.Close()
	c := hookChart(t, "0.30.0", ">=3.2 <=3.4", "", nil)
	skip := map[string]any{"installer": map[string]any{"skipValidation": true}}
	in := Inputs{Namespace: "cf", ReleaseName: "rel", RuntimeName: "rt1", PlatformURL: srv.URL}
	known := in
	known.RuntimeName = "known"
	unreachable := in
	unreachable.PlatformURL = "https://127.0.0.1:1"
	skipped := in
	skipped.Values, skipped.RenderValues = skip, skip
	tests := []struct {
		name string
		in   Inputs
		yaml []string
		objs []runtime.Object
		want outcome
	}{
		{"none", in, nil, nil, outcome{StatusPass, []string{"no Secret codefresh-token in namespace cf"}}},
		{"leftover", in, []string{tokenSecret("cf", token)}, nil, outcome{StatusFail, []string{
			"Secret cf/codefresh-token holds a runtime token but no Helm release is installed in namespace cf", "runtime-token mode",
			`runtime "rt1"`, "which the platform does not know", `runtime "rt1" does not exist`, "failed getting runtime from platform", "kubectl delete secret codefresh-token -n cf"}}},
		{"leftover of a runtime the platform knows", known, []string{tokenSecret("cf", token)}, nil, outcome{StatusPass, []string{
			"the platform knows that runtime", "the hook passes", "skipping the user token's Admin role"}}},
		{"leftover, platform unreachable", unreachable, []string{tokenSecret("cf", token)}, nil, outcome{StatusWarn, []string{
			"the platform did not answer", "which of the two outcomes is unknown", "failed getting runtime from platform", "passes, skipping"}}},
		{"leftover elsewhere", in, []string{tokenSecret("other", token)}, nil, outcome{StatusPass, []string{"no Secret codefresh-token in namespace cf"}}},
		{"empty token", in, []string{tokenSecret("cf", "")}, nil, outcome{StatusPass, []string{"has no token"}}},
		{"this release's own", in, []string{tokenSecret("cf", token)}, []runtime.Object{helmRelease(t, "cf", "rel", 1, rspb.StatusDeployed, "")}, outcome{StatusPass, []string{"belongs to release rel"}}},
		{"another runtime's", in, []string{tokenSecret("cf", token)}, []runtime.Object{runtimeRelease(t, "cf", "other", "0.30.0", true, 0)}, outcome{StatusPass, []string{"runtime release other", "existing-runtime"}}},
		{"hook skipped", skipped, []string{tokenSecret("cf", token)}, nil, outcome{StatusPass, []string{"renders no validate-values hook"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newKit(t, tt.yaml...).objects(tt.objs...).with(tt.in).withChart(c).env()
			p, _ := probe.New(2*time.Second, nil, "")
			p.Roots.AddCert(srv.Certificate())
			env.Probe = p
			r := runThrough(t, LeftoverRuntimeToken(), env)
			tt.want.expect(t, r)
			if strings.Contains(r.Message+r.Hint, token) {
				t.Error("the token appears in the result")
			}
		})
	}
	for _, a := range stub.auths() {
		if a != token {
			t.Errorf("the platform was asked with Authorization %q, want the leftover runtime token", a)
		}
	}
}
