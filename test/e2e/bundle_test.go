package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cli"
	tc "github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// notRecordedRequest matches a request named in a replay's message: its
// method and path.
var notRecordedRequest = regexp.MustCompile(`\b(GET|POST|PUT|PATCH|DELETE) /\S+`)

// TestBundleReplayPreInstall: a pre-install run with the 0.30.0 chart and
// failing checks (no nodes, the platform unreachable) written with
// --bundle, then replayed with no cluster: the same JSON report and exit
// code; the values' token is in no byte of the bundle; --bundle with --fix,
// and a bundle damaged, are one line and exit 2.
func TestBundleReplayPreInstall(t *testing.T) {
	tc.Parallel(t)
	c := tc.StartBare(t)
	v := runtimeValues(t, "")
	file := filepath.Join(t.TempDir(), "run.tgz")
	live, liveDoc := c.RunJSON(t, nil, "--chart", chartLine(t, "chart"), "-f", v, "--bundle", file)
	if live.Code != cli.ExitFailed {
		t.Fatalf("live exit %d, want %d (failing checks)\n%s\n%s", live.Code, cli.ExitFailed, live.Stdout, live.Stderr)
	}
	if tc.Check(t, liveDoc, "chart-renders").Status != "pass" {
		t.Errorf("chart-renders = %+v", tc.Check(t, liveDoc, "chart-renders"))
	}
	// The cluster is gone for the replay: no kubeconfig, nothing to dial.
	rep := tc.Run(t, nil, "replay", file)
	if rep.Code != live.Code {
		t.Errorf("replay exit %d, live %d\n%s", rep.Code, live.Code, rep.Stderr)
	}
	sameReport(t, liveDoc, rep.JSON(t))
	if body := untarred(t, file); strings.Contains(body, "e2e-token") {
		t.Error("the values' user token is in the bundle")
	}

	t.Run("only and output override the recorded flags", func(t *testing.T) {
		res := tc.Run(t, nil, "replay", file, "--only", "chart-renders", "-o", "json")
		doc := res.JSON(t)
		if len(doc.Checks) > 2 || tc.Check(t, doc, "chart-renders").Status != "pass" {
			t.Errorf("replay --only chart-renders: %s", res.Stdout)
		}
	})
	t.Run("--bundle with --fix", func(t *testing.T) {
		res := tc.Run(t, nil, "--kubeconfig", c.AdminKubeconfig(), "--fix", "--yes", "--bundle", filepath.Join(t.TempDir(), "x.tgz"))
		wantCode(t, res, cli.ExitUsage)
		if !strings.Contains(res.Stderr, "--fix") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("stderr %q", res.Stderr)
		}
	})
	t.Run("a truncated bundle", func(t *testing.T) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cut := filepath.Join(t.TempDir(), "cut.tgz")
		writeFile(t, cut, string(b[:len(b)/2]))
		res := tc.Run(t, nil, "replay", cut)
		wantCode(t, res, cli.ExitUsage)
		if !strings.Contains(res.Stderr, "truncated") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("stderr %q", res.Stderr)
		}
	})
}

// planted are credentials the upgrade scenario installs in the release's
// values; none may be in any byte of a bundle.
var planted = []string{
	"e2e-token", "ZTJlLXRva2Vu", // the user token, and its base64 in the chart's Secret
	"hunter2-planted",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA",
	"MIIEplantedPrivateKeyBody",
}

const plantedValues = `extraCredentials:
  password: hunter2-planted
  session: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA
  tls: |
    -----BEGIN RSA PRIVATE KEY-----
    MIIEplantedPrivateKeyBody
    -----END RSA PRIVATE KEY-----
`

// TestBundleReplayUpgrade: a 0.27.6 release installed with real Helm (its
// values hold a token, a password, a JWT and a PEM private key); the live
// --upgrade run to 0.30.0 written with --bundle replays to the same JSON
// report and exit code, and no planted credential is in the bundle.
func TestBundleReplayUpgrade(t *testing.T) {
	tc.Parallel(t)
	c := tc.Start(t)
	v := runtimeValues(t, plantedValues)
	installLine(t, c, tc.HelmBinary(t), chartLine(t, "chart-0.27"), v)
	to := chartLine(t, "chart")

	file := filepath.Join(t.TempDir(), "upgrade.tgz")
	live, liveDoc := upgradePlugin(t, c, to, "-f", v, "--helm-major", "3", "--bundle", file)
	if liveDoc.Upgrade == nil || liveDoc.Upgrade.From != "0.27.6" || liveDoc.Upgrade.To != "0.30.0" {
		t.Fatalf("live upgrade %+v\n%s", liveDoc.Upgrade, live.Stdout)
	}
	rep := tc.Run(t, nil, "replay", file)
	if rep.Code != live.Code {
		t.Errorf("replay exit %d, live %d\n%s", rep.Code, live.Code, rep.Stderr)
	}
	sameReport(t, liveDoc, rep.JSON(t))
	body := untarred(t, file)
	for _, p := range planted {
		if strings.Contains(body, p) {
			t.Errorf("planted credential %q is in the bundle", p)
		}
	}

	// Retargeted offline, the checks judge the 0.30.0 chart against the
	// recorded release and cluster as the live run did; the two that must
	// ask the API server about objects the recorded run never read (0.30.0
	// adds NetworkPolicies: their ownership, the server-side dry run of
	// their creation) say so, as errors, and never guess.
	t.Run("replay --upgrade --chart retargets a bundle of the 0.27.6 release", func(t *testing.T) {
		self := filepath.Join(t.TempDir(), "self.tgz")
		upgradePlugin(t, c, chartLine(t, "chart-0.27"), "-f", v, "--helm-major", "3", "--bundle", self)
		res := tc.Run(t, nil, "replay", self, "--upgrade", "--chart", to)
		doc := res.JSON(t)
		if doc.Upgrade == nil || *doc.Upgrade != *liveDoc.Upgrade {
			t.Errorf("replay upgrade %+v, live %+v", doc.Upgrade, liveDoc.Upgrade)
		}
		needServer := []string{"helm-ownership", "upgrade-apply"}
		for _, want := range liveDoc.Checks {
			got := tc.Check(t, doc, want.ID)
			if contains(needServer, want.ID) {
				// Never a verdict on a guess: an error (or a skip) naming
				// the request the bundle has no answer for.
				if (got.Status != "error" && got.Status != "skip") || !strings.Contains(got.Message, "not recorded in the bundle") || !notRecordedRequest.MatchString(got.Message) {
					t.Errorf("%s: %s (%s), want error or skip naming the request not recorded in the bundle", want.ID, got.Status, got.Message)
				}
				continue
			}
			if got.Status != want.Status || got.Message != want.Message {
				t.Errorf("%s: replay %s (%s), live %s (%s)", want.ID, got.Status, got.Message, want.Status, want.Message)
			}
		}
		if res.Code != cli.ExitFailed {
			t.Errorf("retargeted replay exit %d, want %d (errors count as failures)", res.Code, cli.ExitFailed)
		}
	})
}
