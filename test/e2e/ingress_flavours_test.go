package e2e

import (
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// NGINX by F5 (nginx.org, with its CRDs), Traefik and the AWS Load Balancer
// Controller in one cluster (their IngressClasses are nginx, traefik, alb).
func TestIngressFlavours(t *testing.T) {
	// Bare: the test steps each controller from "installed, not running" to
	// available one at a time (setAvailable) and gives its Service a load
	// balancer address, which only a cloud controller would (none runs here).
	c := testcluster.StartBare(t)
	c.AddNode(t, testcluster.NodeSpec{Name: "node", CPU: "4", Memory: "16Gi"})
	applyUpstream(t, c, "nginx-plus-ingress/crds.yaml")
	applyUpstream(t, c, "nginx-plus-ingress/install.yaml")
	c.CreateNamespace(t, "traefik")
	applyUpstream(t, c, "traefik/rendered.yaml", "-n", "traefik")
	applyUpstream(t, c, "aws-load-balancer-controller/rendered.yaml")

	only := "ingress-class,ingress-controller,ingress-external-address,ingress-report-status,ingress-tcp,alb-ingress-class"
	run := func(class string, want map[string]string) {
		t.Helper()
		expect(t, c, want, "--access-mode", "ingress", "--ingress-host", "h.example.test", "--ingress-class", class, "--only", only)
	}

	// NGINX by F5: -report-ingress-status and -external-service in the fixture.
	run("nginx", map[string]string{"ingress-class": "pass", "ingress-controller": "fail", "ingress-tcp": "skip"})
	setAvailable(t, c, "nginx-ingress", "nginx-ingress", 1)
	run("nginx", map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "pass"})
	setLoadBalancer(t, c, "nginx-ingress", "nginx-ingress", "127.0.0.2")
	c.Kubectl(t, "patch", "deploy", "-n", "nginx-ingress", "nginx-ingress", "--type", "json",
		"-p", `[{"op":"remove","path":"/spec/template/spec/containers/0/args/3"}]`) // -report-ingress-status
	setAvailable(t, c, "nginx-ingress", "nginx-ingress", 1)
	run("nginx", map[string]string{"ingress-external-address": "pass", "ingress-report-status": "fail"})

	// Traefik: publishedservice=traefik/traefik exists.
	run("traefik", map[string]string{"ingress-class": "pass", "ingress-controller": "fail"})
	setAvailable(t, c, "traefik", "traefik", 1)
	run("traefik", map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "pass"})
	setLoadBalancer(t, c, "traefik", "traefik", "127.0.0.3")
	run("traefik", map[string]string{"ingress-external-address": "pass"})
	c.Kubectl(t, "patch", "deploy", "-n", "traefik", "traefik", "--type", "json",
		"-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/args/12","value":"--providers.kubernetesingress.ingressendpoint.publishedservice=traefik/gone"}]`)
	setAvailable(t, c, "traefik", "traefik", 1)
	run("traefik", map[string]string{"ingress-report-status": "fail"})

	// AWS ALB.
	run("alb", map[string]string{"ingress-class": "pass", "alb-ingress-class": "pass", "ingress-controller": "fail", "ingress-report-status": "skip"})
	setAvailable(t, c, "kube-system", "aws-load-balancer-controller", 2)
	run("alb", map[string]string{"ingress-controller": "pass", "ingress-external-address": "skip"})
	c.Kubectl(t, "delete", "ingressclass", "alb")
	run("alb", map[string]string{"ingress-class": "fail", "alb-ingress-class": "fail"})
}
