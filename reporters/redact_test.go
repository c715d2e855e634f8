package reporters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// A token planted in a message, a hint, an object and the server URL never
// reaches the output of any format; the Secret's name does.
func TestEveryFormatRedacts(t *testing.T) {
	const token = "Pl4ntedT0kenValue"
	r := &checks.Report{
		Mode:    checks.ModePost,
		Cluster: checks.ClusterInfo{Server: "https://admin:" + token + "@10.0.0.1:6443", Context: "prod"},
		Outcomes: []checks.Outcome{{
			Meta: checks.Meta{ID: "release-deployed", Category: checks.CategoryRuntime, Title: "t"},
			Result: checks.Result{
				Status:  checks.StatusFail,
				Message: "release failed: admission webhook denied: spec.password=" + token,
				Hint:    "curl -H 'Authorization: Basic " + token + "' https://x; secretKeyRef: {name: runtime-token, key: token}",
				Objects: []checks.ObjectRef{{Kind: "Secret", Namespace: "codefresh", Name: "runtime-token"}},
				// Anchored (SARIF and Code Quality print anchored findings
				// only), with the token in the flag that set the value.
				Source: &checks.Source{Path: "global.codefresh.userToken.token", File: "values.yaml", Line: 4, Flag: "--set global.codefresh.userToken.token=" + token},
			},
		}},
	}
	// A waived copy of the same failure, whose waiver reason quotes the token.
	waived := r.Outcomes[0]
	waived.Meta.ID = "runtime-workloads"
	waived.Status = checks.StatusWaived
	waived.Waiver = &checks.Waived{Reason: "known: password=" + token, Owner: "ops", Expires: "2030-01-01", Status: checks.StatusFail}
	r.Outcomes = append(r.Outcomes, waived)
	r.Waivers = []checks.WaiverUse{{File: "w.yaml", Index: 1, Check: "runtime-workloads", Reason: "known: password=" + token, Expires: "2030-01-01", State: checks.WaiverApplied}}
	for _, f := range Formats {
		rep, err := New(f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rep.Report(&b, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := b.String()
		if strings.Contains(out, token) {
			t.Errorf("%s: the token survived:\n%s", f, out)
		}
		if !strings.Contains(out, "runtime-token") || !strings.Contains(out, "spec.password=***") {
			t.Errorf("%s: references or the masked value missing:\n%s", f, out)
		}
	}
	if !strings.Contains(r.Outcomes[0].Message, token) {
		t.Error("Redacted changed the caller's report")
	}
}
