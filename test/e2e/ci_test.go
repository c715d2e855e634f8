package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/reporters"
)

// gateSA is the ServiceAccount deploy/rbac binds each access tier to.
const gateSA = "system:serviceaccount:codefresh:gitops-preflight"

// TestCIOutputsAndAccessTiers, on one bare control plane:
//   - a values file whose runtime name and IngressClass are wrong: the JSON
//     of the built binary anchors both findings at their line and column
//     (and a replay of its bundle anchors them the same way), -o sarif
//     holds exactly those two as results at those lines, -o github
//     annotates those lines and appends the Markdown report to
//     $GITHUB_STEP_SUMMARY, -o gitlab-codequality points at them;
//   - the three access tiers of deploy/rbac, each applied to the API server
//     and used through --as the ServiceAccount they bind: with each, every
//     pre-install check runs or is skip naming the permission, none ends
//     error; with "review", --installer makes cluster-admin judge the
//     installer (pass for a cluster-admin user, fail for one without
//     rights), and without it --installer is a skip naming create
//     subjectaccessreviews; "dry-run" grants the dry-run verbs and the
//     impersonation the installer's dry runs need, which "review" lacks.
func TestCIOutputsAndAccessTiers(t *testing.T) {
	testcluster.Parallel(t)
	c := testcluster.StartBare(t)
	c.CreateNamespace(t, "codefresh")
	dir := t.TempDir()
	values := filepath.Join(dir, "values.yaml")
	writeFile(t, values, `global:
  codefresh:
    accountId: acc
    userToken:
      token: not-a-real-token
  runtime:
    name: Bad_Name
    ingress:
      enabled: true
      className: no-such-class
      hosts: [rt.example.com]
`)
	args := []string{"--only", "runtime-name,ingress-class", "-f", values}

	res, doc := c.RunJSONReplayed(t, nil, args...)
	wantCode(t, res, 1)
	for id, want := range map[string]string{"runtime-name": ":7:5", "ingress-class": ":10:7"} {
		ch := wantStatus(t, doc, id, "fail")
		if ch.Source == nil || ch.Source.File != values || ch.Source.String() != values+want {
			t.Errorf("%s: source %+v, want %s%s", id, ch.Source, values, want)
		}
	}
	// A flag is a source too.
	_, doc = c.RunJSON(t, nil, "--only", "runtime-name", "--runtime-name", "Nope")
	if ch := testcluster.Check(t, doc, "runtime-name"); ch.Source == nil || ch.Source.Flag != "--runtime-name Nope" {
		t.Errorf("runtime-name from a flag: source %+v", ch.Source)
	}

	kube := []string{"--kubeconfig", c.AdminKubeconfig()}
	sarif := testcluster.Run(t, nil, append(append(kube, "-o", "sarif"), args...)...)
	wantCode(t, sarif, 1)
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
						Region           struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarif.Stdout), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("-o sarif: %v\n%s", err, sarif.Stdout)
	}
	got := map[string]int{}
	for _, r := range log.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation
		if loc.ArtifactLocation.URI != "file://"+filepath.ToSlash(values) {
			t.Errorf("%s at %q", r.RuleID, loc.ArtifactLocation.URI)
		}
		got[r.RuleID] = loc.Region.StartLine
	}
	if len(got) != 2 || got["runtime-name"] != 7 || got["ingress-class"] != 10 {
		t.Errorf("SARIF results %v, want runtime-name at 7 and ingress-class at 10", got)
	}

	summary := filepath.Join(dir, "step-summary.md")
	writeFile(t, summary, "earlier step\n")
	gh := testcluster.Run(t, []string{"GITHUB_STEP_SUMMARY=" + summary}, append(append(kube, "-o", "github"), args...)...)
	wantCode(t, gh, 1)
	if !strings.Contains(gh.Stdout, "::error file="+values+",line=7,col=5,title=runtime-name%3A") {
		t.Errorf("-o github: no annotation on line 7:\n%s", gh.Stdout)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.HasPrefix(string(md), "earlier step\n"+reporters.MarkdownMarker) || !strings.Contains(string(md), "`runtime-name`") {
		t.Errorf("step summary (%v):\n%s", err, md)
	}
	cq := testcluster.Run(t, nil, append(append(kube, "-o", "gitlab-codequality"), args...)...)
	if !strings.Contains(cq.Stdout, `"path": "`+values+`"`) || !strings.Contains(cq.Stdout, `"begin": 10`) {
		t.Errorf("-o gitlab-codequality:\n%s", cq.Stdout)
	}

	// The access tiers.
	root := testcluster.RepoRoot(t)
	tier := func(name string) string { return filepath.Join(root, "deploy", "rbac", name+".yaml") }
	c.Kubectl(t, "create", "clusterrolebinding", "installer-admin", "--clusterrole=cluster-admin", "--user=installer-admin")
	noErrors := func(t *testing.T, doc reporters.Document) {
		t.Helper()
		for _, ch := range doc.Checks {
			if ch.Status == "error" {
				t.Errorf("%s ended error: %s", ch.ID, ch.Message)
			}
			if ch.Status == "skip" && strings.Contains(ch.Message, "permission") && !strings.Contains(ch.Message, "no permission to ") {
				t.Errorf("%s skipped without naming the permission: %s", ch.ID, ch.Message)
			}
		}
	}
	asSA := []string{"--as", gateSA, "-f", values}

	c.Kubectl(t, "apply", "-f", tier("read"))
	c.WaitAllowed(t, gateSA, "list", "secrets", "codefresh")
	_, doc = c.RunJSON(t, nil, asSA...)
	noErrors(t, doc)
	wantStatus(t, doc, "cluster-admin", "fail", "not cluster-admin")
	wantStatus(t, doc, "leftover-runtime-token", "pass")
	_, doc = c.RunJSON(t, nil, append(asSA, "--only", "cluster-admin", "--installer", "installer-admin")...)
	wantStatus(t, doc, "cluster-admin", "skip", "no permission to create subjectaccessreviews")
	if out, _ := canI(c, "list", "secrets", "--all-namespaces", "--as", gateSA); !strings.HasPrefix(out, "no") {
		t.Errorf("the read tier reads Secrets cluster-wide: %s", out)
	}

	c.Kubectl(t, "apply", "-f", tier("review"))
	c.WaitAllowed(t, gateSA, "create", "subjectaccessreviews.authorization.k8s.io", "")
	_, doc = c.RunJSON(t, nil, append(asSA, "--installer", "installer-admin")...)
	noErrors(t, doc)
	wantStatus(t, doc, "cluster-admin", "pass", "the installer (user installer-admin) is cluster-admin")
	_, doc = c.RunJSON(t, nil, append(asSA, "--only", "cluster-admin", "--installer", "system:serviceaccount:argocd:argocd-application-controller")...)
	wantStatus(t, doc, "cluster-admin", "fail", "the installer (ServiceAccount argocd/argocd-application-controller) is not cluster-admin; missing 29 of 29")
	if out, _ := canI(c, "impersonate", "users", "--as", gateSA); !strings.HasPrefix(out, "no") {
		t.Errorf("the review tier may impersonate: %s", out)
	}

	c.Kubectl(t, "apply", "-f", tier("dry-run"))
	c.WaitAllowed(t, gateSA, "impersonate", "users", "")
	_, doc = c.RunJSON(t, nil, append(asSA, "--installer", "installer-admin")...)
	noErrors(t, doc)
	for _, verb := range []string{"create deployments.apps", "patch deployments.apps", "create clusterroles.rbac.authorization.k8s.io", "impersonate serviceaccounts"} {
		v, res, _ := strings.Cut(verb, " ")
		if out, _ := canI(c, v, res, "-n", "codefresh", "--as", gateSA); !strings.HasSuffix(strings.TrimSpace(out), "yes") {
			t.Errorf("the dry-run tier may not %s: %s", verb, out)
		}
	}
}

// canI runs kubectl auth can-i as admin and returns its answer ("yes" or
// "no"; kubectl exits 1 for no).
func canI(c *testcluster.Cluster, args ...string) (string, error) {
	out, err := exec.Command("kubectl", append([]string{"--kubeconfig", c.AdminKubeconfig(), "auth", "can-i"}, args...)...).CombinedOutput()
	return string(out), err
}
