package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// TestTerminationMessage: the verdict line, then each non-pass; never over
// the kubelet's 4096 bytes, cut at a rune boundary.
func TestTerminationMessage(t *testing.T) {
	r := &checks.Report{Outcomes: []checks.Outcome{
		{Meta: checks.Meta{ID: "cluster-reachable"}, Result: checks.Pass("ok")},
		{Meta: checks.Meta{ID: "leftover-runtime-token"}, Result: checks.Fail("Secret codefresh/codefresh-token exists\nsecond line")},
	}}
	got := terminationMessage("kubectl gitops-preflight", r, true, map[string]string{"helm-version": "x"})
	want := "kubectl gitops-preflight gate FAILED: 1 pass, 1 fail\nfail leftover-runtime-token: Secret codefresh/codefresh-token exists\nnot run in the cluster: 1 check(s) that need a workstation\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	for range 400 {
		r.Outcomes = append(r.Outcomes, checks.Outcome{Meta: checks.Meta{ID: "x"}, Result: checks.Fail("%s", strings.Repeat("é", 7))})
	}
	long := terminationMessage("kubectl gitops-preflight", r, true, nil)
	if len(long) > TerminationMessageMax || !utf8.ValidString(long) || !strings.HasSuffix(long, "…\n") {
		t.Errorf("%d bytes, valid %v, tail %q", len(long), utf8.ValidString(long), long[len(long)-10:])
	}
}

// TestGateFlagsRefuse: --in-cluster with --fix or a fleet, --installer-group
// without --installer and a malformed ServiceAccount are usage errors.
func TestGateFlagsRefuse(t *testing.T) {
	for _, args := range [][]string{
		{"--in-cluster", "--fix"},
		{"--in-cluster", "--contexts", "a,b"},
		{"--installer-group", "ops"},
		{"--installer", "system:serviceaccount:onlyns"},
		{"--service-account-dir", "/tmp"},
	} {
		cmd, _ := newCommand(genericiooptions.NewTestIOStreamsDiscard(), Host{})
		cmd.SetArgs(args)
		err := cmd.Execute()
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit %d (%v), want usage error", args, ExitCode(err), err)
		}
	}
}
