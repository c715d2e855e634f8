package checks

import (
	"strings"
	"testing"
)

func TestFindSealedSecretsControllers(t *testing.T) {
	deps, _, _ := conflictWorkloads(t)
	got := map[string]bool{}
	for _, r := range FindSealedSecretsControllers(deps) {
		got[r.Namespace+"/"+r.Name] = true
	}
	for _, w := range deps {
		want := w.Annotations["expect"] == "sealed-secrets"
		if got[w.Namespace+"/"+w.Name] != want {
			t.Errorf("%s/%s: controller = %v, want %v", w.Namespace, w.Name, !want, want)
		}
	}
}

// TestSealedSecretsLeftoverCRD runs sealed-secrets through the kit: its CRD
// left without a controller warns, neither passes, and the fixtures'
// controllers fail.
func TestSealedSecretsLeftoverCRD(t *testing.T) {
	r := runThrough(t, SealedSecrets(), conflictEnv(t, Inputs{}, []crdFixture{{Name: SealedSecretsCRD}}))
	if r.Status != StatusWarn {
		t.Fatalf("CRD alone: %+v", r)
	}
	r = runThrough(t, SealedSecrets(), conflictEnv(t, Inputs{}, []crdFixture{{Name: "ingressroutes.traefik.io"}}))
	if r.Status != StatusPass {
		t.Fatalf("no CRD: %+v", r)
	}
	_, _, objs := conflictWorkloads(t)
	r = runThrough(t, SealedSecrets(), conflictEnv(t, Inputs{}, []crdFixture{{Name: SealedSecretsCRD}}, objs...))
	if r.Status != StatusFail || len(r.Objects) != 3 {
		t.Fatalf("controllers: %+v", r)
	}
	if !strings.Contains(r.Message, "kube-system/sealed-secrets-controller") {
		t.Errorf("message %q", r.Message)
	}
}
