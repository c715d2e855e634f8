package checks

import (
	"context"
	"errors"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/installed"
)

type fakeResolver map[string][]string

func (f fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestAlbDNSAlias(t *testing.T) {
	const alb = "k8s-codefres-abc-123.eu-west-1.elb.amazonaws.com"
	objs := []runtime.Object{
		ingressClass("alb", ControllerALB),
		ingress("codefresh", installed.IngressName, "alb", testHost, nil, networkingv1.IngressLoadBalancerIngress{Hostname: alb}),
	}
	for name, tc := range map[string]struct {
		res  fakeResolver
		want Status
		msg  string
	}{
		"alias":     {fakeResolver{alb: {"1.2.3.4", "5.6.7.8"}, testHost: {"5.6.7.8"}}, StatusPass, "resolves to the ALB"},
		"no record": {fakeResolver{alb: {"1.2.3.4"}}, StatusFail, "does not resolve"},
		"elsewhere": {fakeResolver{alb: {"1.2.3.4"}, testHost: {"9.9.9.9"}}, StatusFail, "resolves to 9.9.9.9, not to the ALB"},
	} {
		t.Run(name, func(t *testing.T) {
			env, _ := postEnv(t, Inputs{IngressClass: "nginx"}, objs)
			env.Mode = ModePost
			env.Resolver = tc.res
			r := runThrough(t, AlbDNSAlias(), env)
			if r.Status != tc.want || !strings.Contains(r.Message, tc.msg) {
				t.Fatalf("= %+v; want %s containing %q", r, tc.want, tc.msg)
			}
		})
	}
}
