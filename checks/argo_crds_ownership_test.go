package checks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestCheckCRDOwnership(t *testing.T) {
	fx := conflictCRDs(t)
	crds := make([]cluster.CRD, len(fx))
	for i, f := range fx {
		crds[i] = cluster.CRD{Name: f.Name, Labels: f.Labels, Annotations: f.Annotations, ResourceVersion: "7"}
	}
	argo, problems := CheckCRDOwnership(crds, DefaultReleaseName, DefaultNamespace)
	if argo != 5 {
		t.Errorf("argo CRDs = %d, want 5", argo)
	}
	got := map[string]string{}
	for _, p := range problems {
		got[p.CRD.Name] = p.Why
		if len(p.Fields) == 0 {
			t.Errorf("%s: a problem with no field to change", p.CRD.Name)
		}
	}
	for _, f := range fx {
		if got[f.Name] != f.Expect {
			t.Errorf("%s: problem %q, want %q", f.Name, got[f.Name], f.Expect)
		}
	}
}

// TestPlanArgoCRDsOwnership runs argo-crds-ownership through the kit over
// the CRD fixtures (4 of 5 argoproj.io CRDs fail, with the ways out) and
// checks the --fix plan's patches; only the CRDs that carry the release's
// metadata pass.
func TestPlanArgoCRDsOwnership(t *testing.T) {
	ctx := context.Background()
	fx := conflictCRDs(t)
	env := conflictEnv(t, Inputs{}, fx)
	r := runThrough(t, ArgoCRDsOwnership(), env)
	if r.Status != StatusFail || len(r.Objects) != 4 || !strings.Contains(r.Message, "4 of 5 argoproj.io CRDs") {
		t.Fatalf("run = %+v", r)
	}
	if !strings.Contains(r.Hint, "--set argo-cd.crds.install=false") || !strings.Contains(r.Hint, "--set argo-rollouts.crds.install=false") || !strings.Contains(r.Hint, "--fix") {
		t.Errorf("hint %q lacks a way out", r.Hint)
	}
	changes, err := planArgoCRDsOwnership(ctx, env)
	if err != nil || len(changes) != 4 {
		t.Fatalf("plan = %d changes, %v", len(changes), err)
	}
	byName := map[string]Change{}
	for _, c := range changes {
		byName[c.Object.Name] = c
		if c.Resource != cluster.CRDResource || c.PatchType != "application/merge-patch+json" {
			t.Errorf("%s: resource %v, patch type %s", c.Object.Name, c.Resource, c.PatchType)
		}
	}
	// experiments only lacks the namespace annotation: the patch sets only it,
	// guarded by the resourceVersion that was read.
	var patch map[string]map[string]any
	if err := json.Unmarshal(byName["experiments.argoproj.io"].Patch, &patch); err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"meta.helm.sh/release-namespace":"codefresh"},"resourceVersion":"42"}}`
	if got, _ := json.Marshal(patch); string(got) != want {
		t.Errorf("experiments patch = %s, want %s", got, want)
	}
	rf := byName["rollouts.argoproj.io"].Fields
	if len(rf) != 2 || rf[0].Field != "metadata.annotations[meta.helm.sh/release-name]" || rf[0].Old != "argo-rollouts" || rf[0].New != DefaultReleaseName {
		t.Errorf("rollouts fields = %+v", rf)
	}

	// --crds=rollouts plans only the Argo Rollouts CRDs.
	env = conflictEnv(t, Inputs{ReleaseName: DefaultReleaseName, Namespace: DefaultNamespace}, fx)
	env.Fix.CRDs = "rollouts"
	changes, err = planArgoCRDsOwnership(ctx, env)
	if err != nil || len(changes) != 2 {
		t.Fatalf("rollouts plan = %+v, %v", changes, err)
	}
	for _, c := range changes {
		if !isRolloutsCRD(c.Object.Name) {
			t.Errorf("--crds=rollouts planned %s", c.Object.Name)
		}
	}

	// Only the argoproj.io CRD the release owns, and CRDs of other groups:
	// nothing to adopt.
	var owned []crdFixture
	for _, f := range fx {
		if f.Expect == "" {
			owned = append(owned, f)
		}
	}
	outcome{StatusPass, []string{"all 1 argoproj.io CRDs carry Helm ownership metadata for release " + DefaultReleaseName + " in namespace " + DefaultNamespace}}.
		expect(t, runThrough(t, ArgoCRDsOwnership(), conflictEnv(t, Inputs{}, owned)))
	outcome{StatusPass, []string{"no argoproj.io CRDs in the cluster"}}.
		expect(t, runThrough(t, ArgoCRDsOwnership(), conflictEnv(t, Inputs{}, []crdFixture{{Name: "ingressroutes.traefik.io"}})))
}
