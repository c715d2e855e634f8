package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// TestWaivers: --waivers through the built binary on a real control plane
// with no nodes, where node-resources fails. A valid waiver turns the
// failure into "waived" with its reason (exit 0); an expired one is a warn
// naming it and the failure counts again (exit 1); a malformed file is a
// usage error before anything is checked (exit 2).
func TestWaivers(t *testing.T) {
	tc.Parallel(t)
	// Only etcd and kube-apiserver: a cluster with no node at all is the
	// state under test, and nothing needs to reconcile.
	c := tc.StartBare(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	future := time.Now().UTC().AddDate(0, 1, 0).Format("2006-01-02")
	valid := write("valid.yaml", `
- check: node-resources
  reason: lab cluster without nodes yet
  owner: platform-team
  expires: `+future+`
  namespace: "codef*"
- check: ingress-tls
  reason: self-signed certificate in staging
  expires: `+future+`
`)
	expired := write("expired.yaml", `
- check: node-resources
  reason: lab cluster without nodes yet
  expires: 2020-01-31
`)
	args := []string{"--only", "node-resources"}

	t.Run("without waivers node-resources fails", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, nil, args...)
		wantCode(t, res, 1)
		wantStatus(t, doc, "node-resources", "fail")
	})

	t.Run("a valid waiver waives the failure", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, nil, append(args, "--waivers", valid)...)
		wantCode(t, res, 0)
		nr := wantStatus(t, doc, "node-resources", "waived")
		if w := nr.Waiver; w == nil || w.Reason != "lab cluster without nodes yet" || w.Owner != "platform-team" || w.Expires != future || w.OriginalStatus != "fail" {
			t.Errorf("node-resources waiver = %+v", nr.Waiver)
		}
		if doc.Summary.Waived != 1 || doc.Summary.Fail != 0 || doc.Summary.Impact["runtime-breaks"] != 0 {
			t.Errorf("summary = %+v", doc.Summary)
		}
		if len(doc.Waivers) != 2 || doc.Waivers[0].Status != "applied" || doc.Waivers[1].Status != "unmatched" ||
			doc.Waivers[1].Check != "ingress-tls" || doc.Waivers[1].Index != 2 {
			t.Errorf("waivers = %+v", doc.Waivers)
		}
	})

	t.Run("the table shows the reason and the unmatched waiver", func(t *testing.T) {
		res := tc.Run(t, nil, append(args, "--kubeconfig", c.AdminKubeconfig(), "--waivers", valid)...)
		wantCode(t, res, 0)
		for _, w := range []string{"≈ waived", "waived: lab cluster without nodes yet (owner platform-team, expires " + future,
			"1 waived", "waiver 2 of " + valid + " (ingress-tls) matched no warn, fail or error"} {
			if !strings.Contains(res.Stdout, w) {
				t.Errorf("table output lacks %q:\n%s", w, res.Stdout)
			}
		}
	})

	t.Run("an unmatched waiver fails the run with --fail-on=warn", func(t *testing.T) {
		res, _ := c.RunJSONReplayed(t, nil, append(args, "--waivers", valid, "--fail-on", "warn")...)
		wantCode(t, res, 1)
	})

	t.Run("an expired waiver is a warn and the failure counts again", func(t *testing.T) {
		res, doc := c.RunJSONReplayed(t, nil, append(args, "--waivers", expired)...)
		wantCode(t, res, 1)
		if nr := wantStatus(t, doc, "node-resources", "fail"); nr.Waiver != nil {
			t.Errorf("an expired waiver covers node-resources: %+v", nr.Waiver)
		}
		if len(doc.Waivers) != 1 || doc.Waivers[0].Status != "expired" || doc.Waivers[0].Expires != "2020-01-31" {
			t.Errorf("waivers = %+v", doc.Waivers)
		}
		res = tc.Run(t, nil, append(args, "--kubeconfig", c.AdminKubeconfig(), "--waivers", expired)...)
		wantCode(t, res, 1)
		if w := "⚠ waiver 1 of " + expired + " (node-resources) expired on 2020-01-31"; !strings.Contains(res.Stdout, w) {
			t.Errorf("table output lacks %q:\n%s", w, res.Stdout)
		}
	})

	for _, bad := range []struct{ name, content, wantErr string }{
		{"malformed.yaml", "- check: node-resources\n  reason: [unclosed\n", "want a YAML list of waivers"},
		{"no-reason.yaml", "- check: node-resources\n  expires: 2030-01-01\n", "waiver 1 (node-resources): reason is required"},
		{"unknown-check.yaml", "- check: node-resource\n  reason: x\n  expires: 2030-01-01\n", `unknown check ID "node-resource"`},
		{"unknown-field.yaml", "- check: node-resources\n  reason: x\n  expires: 2030-01-01\n  until: 2031-01-01\n", `unknown field "until"`},
	} {
		t.Run("usage error: "+bad.name, func(t *testing.T) {
			res := tc.Run(t, nil, append(args, "--kubeconfig", c.AdminKubeconfig(), "--waivers", write(bad.name, bad.content))...)
			wantCode(t, res, 2)
			if !strings.Contains(res.Stderr, bad.wantErr) || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
				t.Errorf("stderr %q: want one line containing %q", res.Stderr, bad.wantErr)
			}
			if res.Stdout != "" {
				t.Errorf("stdout not empty on usage error: %q", res.Stdout)
			}
		})
	}
}
