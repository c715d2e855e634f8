package installed

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// fakeCluster is a runtime namespace "codefresh" with at most one
// codefresh-cm, some Ingresses and IngressClasses.
type fakeCluster struct {
	cm         map[string]string
	ingresses  map[string]cluster.Ingress
	classes    []cluster.IngressClass
	classesErr error
}

func (f fakeCluster) ConfigMap(ns, name string) (cluster.ConfigMap, error) {
	if ns != "codefresh" || name != plan.ConfigMapName || f.cm == nil {
		return cluster.ConfigMap{}, nil
	}
	return cluster.ConfigMap{Exists: true, Data: f.cm}, nil
}

func (f fakeCluster) Ingress(ns, name string) (cluster.Ingress, bool, error) {
	ing, ok := f.ingresses[ns+"/"+name]
	return ing, ok, nil
}

func (f fakeCluster) IngressClasses() ([]cluster.IngressClass, error) {
	return f.classes, f.classesErr
}

// TestRead: the access mode, host and class are inferred from what the
// chart rendered (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369)
// unless the inputs say otherwise.
func TestRead(t *testing.T) {
	cm := func(host string) map[string]string {
		return map[string]string{"ingressHost": host, "version": "0.1.72"}
	}
	legacy := map[string]cluster.Ingress{"codefresh/" + LegacyIngressName: {Namespace: "codefresh", Name: LegacyIngressName, Class: "istio", Hosts: []string{"legacy.example.com"}}}
	both := map[string]cluster.Ingress{
		"codefresh/" + IngressName:       {Namespace: "codefresh", Name: IngressName, Hosts: []string{"rt.example.com"}},
		"codefresh/" + LegacyIngressName: {Namespace: "codefresh", Name: LegacyIngressName, Class: "istio", Hosts: []string{"legacy.example.com"}},
	}
	istio := []cluster.IngressClass{{Name: "istio", Controller: "istio.io/ingress-controller"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "networking.k8s.io", Resource: "ingressclasses"}, "", errors.New("RBAC"))
	for name, tc := range map[string]struct {
		in               plan.Install
		c                fakeCluster
		mode             plan.AccessMode
		host, class, ctl string
		found            bool
	}{
		"tunnel URL": {plan.Install{AccessMode: plan.AccessTunnel}, fakeCluster{cm: cm("https://acc-rt.tunnels.cf-cd.com")}, plan.AccessTunnel, "acc-rt.tunnels.cf-cd.com", "", "", false},
		"ingressUrl": {plan.Install{AccessMode: plan.AccessTunnel}, fakeCluster{cm: cm("https://rt.example.com")}, plan.AccessServiceMesh, "rt.example.com", "", "", false},
		"nothing":    {plan.Install{AccessMode: plan.AccessTunnel}, fakeCluster{}, plan.AccessTunnel, "", "", "", false},
		"flags win": {plan.Install{AccessMode: plan.AccessServiceMesh, IngressURL: "https://mesh.example.com:8443/x"}, fakeCluster{cm: cm("https://rt.example.com")},
			plan.AccessServiceMesh, "mesh.example.com", "", "", false},
		"ingress host flag": {plan.Install{AccessMode: plan.AccessTunnel, IngressHost: "flag.example.com"}, fakeCluster{ingresses: legacy, classes: istio},
			plan.AccessIngress, "flag.example.com", "istio", "istio.io/ingress-controller", true},
		"legacy ingress": {plan.Install{AccessMode: plan.AccessTunnel, IngressClass: "nginx"}, fakeCluster{ingresses: legacy, classes: istio},
			plan.AccessIngress, "legacy.example.com", "istio", "istio.io/ingress-controller", true},
		"chart's ingress first, input class": {plan.Install{AccessMode: plan.AccessTunnel, IngressClass: "nginx"}, fakeCluster{ingresses: both, classes: istio},
			plan.AccessIngress, "rt.example.com", "nginx", "", false},
		"classes forbidden": {plan.Install{AccessMode: plan.AccessTunnel}, fakeCluster{ingresses: legacy, classesErr: forbidden},
			plan.AccessIngress, "legacy.example.com", "istio", "", false},
	} {
		t.Run(name, func(t *testing.T) {
			tc.in.Namespace = "codefresh"
			f, err := Read(tc.c, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if f.Mode != tc.mode || f.Host != tc.host || f.Class != tc.class || f.Controller != tc.ctl || f.ClassFound != tc.found {
				t.Fatalf("facts = mode %s host %q class %q controller %q found %v; want %s %q %q %q %v",
					f.Mode, f.Host, f.Class, f.Controller, f.ClassFound, tc.mode, tc.host, tc.class, tc.ctl, tc.found)
			}
		})
	}
	if _, err := Read(fakeCluster{ingresses: legacy, classesErr: errors.New("boom")}, plan.Install{Namespace: "codefresh"}); err == nil {
		t.Error("an IngressClass list that fails other than forbidden is not an error")
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "",
		"rt.example.com":                "rt.example.com",
		"https://rt.example.com:8443/x": "rt.example.com",
		"http://[::1]:80":               "::1",
		"https://%zz":                   "",
	} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}
