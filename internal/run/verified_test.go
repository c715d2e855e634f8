package run

import (
	"reflect"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// registered returns the registered Meta of id.
func registered(t *testing.T, id string) checks.Meta {
	t.Helper()
	for _, c := range checks.All() {
		if c.ID == id {
			return c.Meta
		}
	}
	t.Fatalf("no check %s", id)
	return checks.Meta{}
}

func TestNothingVerified(t *testing.T) {
	out := func(id string, st checks.Status, cause checks.SkipCause, msg string) checks.Outcome {
		return checks.Outcome{Meta: registered(t, id), Result: checks.Result{Status: st, Message: msg, Cause: cause}}
	}
	denied := "no permission to list secrets"
	for _, tc := range []struct {
		name string
		mode checks.Mode
		outs []checks.Outcome
		want []string
	}{
		{"both denied", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, checks.SkipForbidden, denied), out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, "no permission: x")}, []string{"release-deployed", "runtime-workloads"}},
		{"one verified", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, checks.SkipForbidden, denied), out("runtime-workloads", checks.StatusPass, "", "ok")}, nil},
		{"skipped for another reason", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, checks.SkipPrerequisite, "requires cluster-reachable"), out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, denied)}, nil},
		{"a check's own skip that reads like a denial", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, "", denied), out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, denied)}, nil},
		{"only one selected, denied", checks.ModePost, []checks.Outcome{out("runtime-workloads", checks.StatusSkip, checks.SkipForbidden, denied)}, []string{"runtime-workloads"}},
		{"no core check selected", checks.ModePost, []checks.Outcome{out("nginx-tls-secret", checks.StatusSkip, checks.SkipForbidden, denied)}, nil},
		{"pre-install has no such rule", checks.ModePre, []checks.Outcome{out("release-deployed", checks.StatusSkip, checks.SkipForbidden, denied)}, nil},
	} {
		got := nothingVerified(&checks.Report{Mode: tc.mode, Outcomes: tc.outs})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: nothingVerified = %v, want %v", tc.name, got, tc.want)
		}
	}
}
