package e2e

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// NGINX by F5 (nginx.org, with its CRDs), Traefik and the AWS Load Balancer
// Controller in one cluster (their IngressClasses are nginx, traefik, alb).
func TestIngressFlavours(t *testing.T) {
	testcluster.Parallel(t)
	// The controllers come up for real once a node joins; only their
	// Services' load balancer addresses are written by the test
	// (setLoadBalancer: no cloud controller runs here).
	c := testcluster.Start(t)
	applyUpstream(t, c, "nginx-plus-ingress/crds.yaml")
	applyUpstream(t, c, "nginx-plus-ingress/install.yaml")
	c.CreateNamespace(t, "traefik")
	applyUpstream(t, c, "traefik/rendered.yaml", "-n", "traefik")
	applyUpstream(t, c, "aws-load-balancer-controller/rendered.yaml")

	only := "ingress-class,ingress-controller,ingress-external-address,ingress-report-status,ingress-tcp,alb-ingress-class"
	run := func(class string, want map[string]string) {
		t.Helper()
		expectReplayed(t, c, want, "--access-mode", "ingress", "--ingress-host", "h.example.test", "--ingress-class", class, "--only", only)
	}

	// No node yet: every controller's pods are Pending.
	run("nginx", map[string]string{"ingress-class": "pass", "ingress-controller": "fail", "ingress-tcp": "skip"})
	run("traefik", map[string]string{"ingress-class": "pass", "ingress-controller": "fail"})
	run("alb", map[string]string{"ingress-class": "pass", "alb-ingress-class": "pass", "ingress-controller": "fail", "ingress-report-status": "skip"})
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	for _, d := range [][2]string{{"nginx-ingress", "nginx-ingress"}, {"traefik", "traefik"}, {"kube-system", "aws-load-balancer-controller"}} {
		waitAvailable(t, c, d[0], d[1])
	}

	// NGINX by F5: -report-ingress-status and -external-service in the fixture.
	run("nginx", map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "pass"})
	setLoadBalancer(t, c, "nginx-ingress", "nginx-ingress", "127.0.0.2")
	c.Kubectl(t, "patch", "deploy", "-n", "nginx-ingress", "nginx-ingress", "--type", "json",
		"-p", `[{"op":"remove","path":"/spec/template/spec/containers/0/args/3"}]`) // -report-ingress-status
	waitAvailable(t, c, "nginx-ingress", "nginx-ingress")
	run("nginx", map[string]string{"ingress-external-address": "pass", "ingress-report-status": "fail"})

	// Traefik: publishedservice=traefik/traefik exists.
	run("traefik", map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "pass"})
	setLoadBalancer(t, c, "traefik", "traefik", "127.0.0.3")
	run("traefik", map[string]string{"ingress-external-address": "pass"})
	c.Kubectl(t, "patch", "deploy", "-n", "traefik", "traefik", "--type", "json",
		"-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/args/12","value":"--providers.kubernetesingress.ingressendpoint.publishedservice=traefik/gone"}]`)
	waitAvailable(t, c, "traefik", "traefik")
	run("traefik", map[string]string{"ingress-report-status": "fail"})

	// AWS ALB.
	run("alb", map[string]string{"ingress-controller": "pass", "ingress-external-address": "skip"})
	c.Kubectl(t, "delete", "ingressclass", "alb")
	run("alb", map[string]string{"ingress-class": "fail", "alb-ingress-class": "fail"})
}
