package checks

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// TestAppliesReason: the runner's evaluation of a check's applicability,
// one message form for every check.
func TestAppliesReason(t *testing.T) {
	ingress := Applies{Access: []AccessMode{AccessIngress}}
	tests := []struct {
		name  string
		a     Applies
		modes Mode
		run   Mode
		in    Inputs
		want  string // "" = applies; else a substring of the reason
	}{
		{"zero applies", Applies{}, ModePre, ModePre, Inputs{AccessMode: AccessTunnel}, ""},
		{"access mode matches", ingress, ModePre, ModePre, Inputs{AccessMode: AccessIngress}, ""},
		{"access mode differs", ingress, ModePre, ModePre, Inputs{AccessMode: AccessTunnel},
			"not applicable: access mode is tunnel; this check is for ingress (set global.runtime.ingress.enabled=true or --access-mode ingress)"},
		{"one of two modes", Applies{Access: []AccessMode{AccessIngress, AccessServiceMesh}}, ModePre, ModePre, Inputs{AccessMode: AccessServiceMesh}, ""},
		{"two modes, neither", Applies{Access: []AccessMode{AccessIngress, AccessServiceMesh}}, ModePre, ModePre, Inputs{AccessMode: AccessTunnel}, "this check is for ingress (set global.runtime.ingress.enabled=true or --access-mode ingress) or service-mesh"},
		{"access not evaluated after install", ingress, ModePre | ModePost, ModePost, Inputs{AccessMode: AccessTunnel}, ""},
		{"pre-only check in a post run", Applies{}, ModePre, ModePost, Inputs{}, "not applicable: runs before the install only"},
		{"post-only check in a pre run", Applies{}, ModePost, ModePre, Inputs{}, "not applicable: runs after the install only"},
		{"existing Argo CD wanted", Applies{ExistingArgoCD: true}, ModePre, ModePre, Inputs{}, "not applicable: Argo CD is installed by the chart (argo-cd.enabled=true); this check is for --existing-argocd"},
		{"existing Argo CD given", Applies{ExistingArgoCD: true}, ModePre, ModePre, Inputs{ExistingArgoCD: true}, ""},
		{"needs values, none", Applies{Needs: []Input{InputValues}}, ModePre, ModePre, Inputs{}, "not applicable: no values given"},
		{"needs values, given", Applies{Needs: []Input{InputValues}}, ModePre, ModePre, Inputs{Values: map[string]any{}}, ""},
		{"needs host, none", Applies{Needs: []Input{InputIngressHost}}, ModePre, ModePre, Inputs{}, "not applicable: no ingress host"},
		{"needs host, given", Applies{Needs: []Input{InputIngressHost}}, ModePre, ModePre, Inputs{IngressHost: "rt.example.com"}, ""},
		{"access before needs", Applies{Access: []AccessMode{AccessIngress}, Needs: []Input{InputIngressHost}}, ModePre, ModePre, Inputs{AccessMode: AccessTunnel}, "access mode is tunnel"},
		{"unknown input", Applies{Needs: []Input{"kubeconfig"}}, ModePre, ModePre, Inputs{}, `needs unknown input "kubeconfig"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.Reason(tt.modes, tt.run, tt.in)
			if tt.want == "" && got != "" {
				t.Fatalf("Reason = %q, want applicable", got)
			}
			if tt.want != "" && (!strings.Contains(got, tt.want) || !strings.HasPrefix(got, NotApplicable)) {
				t.Fatalf("Reason = %q, want %q containing %q", got, NotApplicable+"...", tt.want)
			}
		})
	}
}

// TestRunSkipsNotApplicable: the runner never calls a check that does not
// apply, reports it skip with the reason, and a fatal check that does not
// apply does not stop the run.
func TestRunSkipsNotApplicable(t *testing.T) {
	var calls atomic.Int32
	counting := func(context.Context, *Env) (Result, error) { calls.Add(1); return Pass("ran"), nil }
	ingressOnly := stub("ingress-only", counting)
	ingressOnly.Applies = Applies{Access: []AccessMode{AccessIngress}}
	fatal := stub("fatal-mesh", returning(Fail("down"), nil))
	fatal.Fatal = true
	fatal.Applies = Applies{Access: []AccessMode{AccessServiceMesh}}
	other := stub("other", counting)

	env, _ := fakeEnv(t, "v1.30.0")
	env.Inputs.AccessMode = AccessTunnel
	got := Run(t.Context(), env, []Check{fatal, ingressOnly, other}, RunOptions{})
	if got[0].Status != StatusSkip || got[0].Cause != SkipNotApplicable || !strings.HasPrefix(got[0].Message, NotApplicable+"access mode is tunnel") {
		t.Errorf("fatal not applicable: %s %q", got[0].Status, got[0].Message)
	}
	if got[1].Status != StatusSkip || got[1].Cause != SkipNotApplicable || !strings.Contains(got[1].Message, "this check is for ingress") {
		t.Errorf("ingress-only: %s %q", got[1].Status, got[1].Message)
	}
	if got[2].Status != StatusPass {
		t.Errorf("other: %s %q (a not-applicable fatal check must not stop the run)", got[2].Status, got[2].Message)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("check functions called %d times, want 1 (only the applicable one)", n)
	}

	env.Inputs.AccessMode = AccessIngress
	calls.Store(0)
	got = Run(t.Context(), env, []Check{ingressOnly}, RunOptions{})
	if got[0].Status != StatusPass || calls.Load() != 1 {
		t.Errorf("ingress-only in ingress mode: %s %q, %d calls", got[0].Status, got[0].Message, calls.Load())
	}
}

// TestRegistryRejectsUnknownInput: a typo in Needs fails at start-up.
func TestRegistryRejectsUnknownInput(t *testing.T) {
	c := stub("a", returning(Pass("ok"), nil))
	c.Applies.Needs = []Input{"kubeconfig"}
	if _, err := NewRegistry([]Check{c}); err == nil || !strings.Contains(err.Error(), `unknown input "kubeconfig"`) {
		t.Fatalf("NewRegistry: %v, want unknown input error", err)
	}
}

// TestNoAccessModeGuardInChecks: applicability is metadata. No check file
// compares the planned access mode or --existing-argocd to skip itself.
func TestNoAccessModeGuardInChecks(t *testing.T) {
	guard := regexp.MustCompile(`if [^\n{]*Inputs\.(AccessMode|ExistingArgoCD|Values == nil|IngressHost == "")[^\n{]*\{\s*return (Skip\(|r, )`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := guard.Find(b); m != nil {
			t.Errorf("%s: %q: declare it in Meta.Applies instead", f, m)
		}
	}
}
