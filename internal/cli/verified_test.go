package cli

import (
	"reflect"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

func TestNothingVerified(t *testing.T) {
	out := func(id string, st checks.Status, msg string) checks.Outcome {
		return checks.Outcome{Meta: checks.Meta{ID: id}, Result: checks.Result{Status: st, Message: msg}}
	}
	denied := "no permission to list secrets"
	for _, tc := range []struct {
		name string
		mode checks.Mode
		outs []checks.Outcome
		want []string
	}{
		{"both denied", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, denied), out("runtime-workloads", checks.StatusSkip, "no permission: x")}, []string{"release-deployed", "runtime-workloads"}},
		{"one verified", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, denied), out("runtime-workloads", checks.StatusPass, "ok")}, nil},
		{"skipped for another reason", checks.ModePost, []checks.Outcome{out("release-deployed", checks.StatusSkip, "requires cluster-reachable"), out("runtime-workloads", checks.StatusSkip, denied)}, nil},
		{"only one selected, denied", checks.ModePost, []checks.Outcome{out("runtime-workloads", checks.StatusSkip, denied)}, []string{"runtime-workloads"}},
		{"no core check selected", checks.ModePost, []checks.Outcome{out("nginx-tls-secret", checks.StatusSkip, denied)}, nil},
		{"pre-install has no such rule", checks.ModePre, []checks.Outcome{out("release-deployed", checks.StatusSkip, denied)}, nil},
	} {
		got := nothingVerified(&checks.Report{Mode: tc.mode, Outcomes: tc.outs})
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: nothingVerified = %v, want %v", tc.name, got, tc.want)
		}
	}
}
