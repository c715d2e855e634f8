package checks

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
)

const testHost = "runtime.example.com"

func nginxObjs(t *testing.T, tls []networkingv1.IngressTLS, secrets ...runtime.Object) []runtime.Object {
	objs := []runtime.Object{
		ingressClass("nginx", ControllerNginxF5),
		ingress("codefresh", installed.IngressName, "nginx", testHost, tls),
	}
	return append(objs, secrets...)
}

func TestPlanNginxTLSSecretRefuses(t *testing.T) {
	good := tlsSecret(t, "codefresh", "good", corev1.SecretTypeTLS, testHost)
	for name, tc := range map[string]struct {
		secret string
		objs   []runtime.Object
		want   string
	}{
		"no --tls-secret":    {"", nginxObjs(t, nil, good), "--tls-secret"},
		"secret missing":     {"nope", nginxObjs(t, nil, good), "does not exist"},
		"wrong type":         {"opaque", nginxObjs(t, nil, tlsSecret(t, "codefresh", "opaque", corev1.SecretTypeOpaque, testHost)), "not kubernetes.io/tls"},
		"host not covered":   {"other", nginxObjs(t, nil, tlsSecret(t, "codefresh", "other", corev1.SecretTypeTLS, "other.example.com")), "does not cover"},
		"other namespace":    {"good", nginxObjs(t, nil, tlsSecret(t, "elsewhere", "good", corev1.SecretTypeTLS, testHost)), "does not exist"},
		"not an NGINX by F5": {"good", []runtime.Object{ingressClass("nginx", "k8s.io/ingress-nginx"), ingress("codefresh", installed.IngressName, "nginx", testHost, nil), good}, "does not apply"},
		"no runtime Ingress": {"good", []runtime.Object{ingressClass("nginx", ControllerNginxF5), good}, "does not apply"},
	} {
		t.Run(name, func(t *testing.T) {
			env, _ := postEnv(t, Inputs{IngressClass: "nginx"}, tc.objs)
			env.Fix.TLSSecret = tc.secret
			changes, err := PlanNginxTLSSecret(context.Background(), env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PlanNginxTLSSecret = %v, %v; want error containing %q", changes, err, tc.want)
			}
			if strings.Contains(err.Error(), testKeyMarker) {
				t.Fatalf("error shows key material: %v", err)
			}
		})
	}
}

func TestPlanNginxTLSSecretPatches(t *testing.T) {
	good := tlsSecret(t, "codefresh", "runtime-tls", corev1.SecretTypeTLS, "*.example.com")
	existing := []networkingv1.IngressTLS{
		{Hosts: []string{testHost, "keep.example.com"}, SecretName: "old"},
		{Hosts: []string{"b.example.com"}, SecretName: "b"},
	}
	env, _ := postEnv(t, Inputs{IngressClass: "nginx"}, nginxObjs(t, existing, good))
	env.Fix.TLSSecret = "runtime-tls"
	changes, err := PlanNginxTLSSecret(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 {
		t.Fatalf("got %d changes, want 1", len(changes))
	}
	c := changes[0]
	if c.Object != (ObjectRef{Kind: "Ingress", Namespace: "codefresh", Name: installed.IngressName}) || c.Resource.Resource != "ingresses" || c.PatchType != types.JSONPatchType {
		t.Fatalf("change = %+v", c)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(c.Patch, &ops); err != nil {
		t.Fatalf("patch %s: %v", c.Patch, err)
	}
	if len(ops) != 2 || ops[0].Op != "test" || ops[0].Path != "/metadata/resourceVersion" || string(ops[0].Value) != `"42"` ||
		ops[1].Op != "add" || ops[1].Path != "/spec/tls" {
		t.Fatalf("patch = %s", c.Patch)
	}
	want := `[{"hosts":["keep.example.com"],"secretName":"old"},{"hosts":["b.example.com"],"secretName":"b"},{"hosts":["runtime.example.com"],"secretName":"runtime-tls"}]`
	if string(ops[1].Value) != want {
		t.Fatalf("spec.tls = %s\nwant      %s", ops[1].Value, want)
	}
	if len(c.Fields) != 1 || c.Fields[0].Field != "spec.tls" || !strings.Contains(c.Fields[0].Old, "secretName: old") || !strings.Contains(c.Fields[0].New, "secretName: runtime-tls") {
		t.Fatalf("fields = %+v", c.Fields)
	}
	for _, s := range []string{string(c.Patch), c.Fields[0].Old, c.Fields[0].New} {
		if strings.Contains(s, testKeyMarker) || strings.Contains(s, string(good.Data[corev1.TLSPrivateKeyKey])) {
			t.Fatal("plan shows key material")
		}
	}
}

func TestPlanNginxTLSSecretIdempotent(t *testing.T) {
	good := tlsSecret(t, "codefresh", "runtime-tls", corev1.SecretTypeTLS, testHost)
	tls := []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "runtime-tls"}}
	env, _ := postEnv(t, Inputs{IngressClass: "nginx"}, nginxObjs(t, tls, good))
	env.Fix.TLSSecret = "runtime-tls"
	changes, err := PlanNginxTLSSecret(context.Background(), env)
	if err != nil || len(changes) != 0 {
		t.Fatalf("PlanNginxTLSSecret on a fixed Ingress = %v, %v; want no changes", changes, err)
	}
	r, err := runNginxTLSSecret(context.Background(), env)
	if err != nil || r.Status != StatusPass {
		t.Fatalf("check on a fixed Ingress = %+v, %v", r, err)
	}
}

func TestNginxTLSSecretCheck(t *testing.T) {
	good := tlsSecret(t, "codefresh", "good", corev1.SecretTypeTLS, testHost)
	wrongHost := tlsSecret(t, "codefresh", "wrong", corev1.SecretTypeTLS, "x.example.org")
	for name, tc := range map[string]struct {
		objs []runtime.Object
		want Status
		msg  string
	}{
		"no tls":         {nginxObjs(t, nil, good), StatusFail, "names no Secret"},
		"secret missing": {nginxObjs(t, []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "gone"}}), StatusFail, "does not exist"},
		"wrong host":     {nginxObjs(t, []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "wrong"}}, wrongHost), StatusFail, "does not cover"},
		"good":           {nginxObjs(t, []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "good"}}, good), StatusPass, "Secret good"},
		"community nginx": {[]runtime.Object{ingressClass("nginx", "k8s.io/ingress-nginx"), ingress("codefresh", installed.IngressName, "nginx", testHost, nil)},
			StatusSkip, "not NGINX by F5"},
	} {
		t.Run(name, func(t *testing.T) {
			env, _ := postEnv(t, Inputs{IngressClass: "nginx"}, tc.objs)
			r, err := runNginxTLSSecret(context.Background(), env)
			if err != nil || r.Status != tc.want || !strings.Contains(r.Message, tc.msg) {
				t.Fatalf("= %+v, %v; want %s containing %q", r, err, tc.want, tc.msg)
			}
		})
	}
}

// TestNginxTLSSecretThroughTheKit runs the check through the runner, as a
// --post run does: a Secret covering the host passes, a missing one fails.
func TestNginxTLSSecretThroughTheKit(t *testing.T) {
	good := tlsSecret(t, "codefresh", "good", corev1.SecretTypeTLS, testHost)
	in := Inputs{IngressClass: "nginx"}
	for _, tc := range []struct {
		name string
		tls  []networkingv1.IngressTLS
		want outcome
	}{
		{"covers the host", []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "good"}}, outcome{StatusPass, []string{"Secret good"}}},
		{"secret missing", []networkingv1.IngressTLS{{Hosts: []string{testHost}, SecretName: "gone"}}, outcome{StatusFail, []string{"does not exist"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newKit(t).objects(nginxObjs(t, tc.tls, good)...).with(in).inMode(ModePost).run(NginxTLSSecret())
			tc.want.expect(t, r)
		})
	}
}
