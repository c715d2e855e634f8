package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/testcluster"
)

// NGINX Community (ingress-nginx, AWS manifest) on an AWS node: class,
// controller, external address, TCP annotations, report-status, and TLS /
// reachability of the host through --connect-to to local HTTPS servers.
func TestIngressNginxCommunity(t *testing.T) {
	testcluster.Parallel(t)
	// The controller comes up for real once a node joins; only the Service's
	// load balancer address is written by the test (setLoadBalancer: no cloud
	// controller runs here).
	c := testcluster.Start(t)
	applyUpstream(t, c, "ingress-nginx/aws.yaml")

	const host = "runtime.example.test"
	base := []string{"--access-mode", "ingress", "--ingress-host", host, "--skip-ingress-validation",
		"--only", "ingress-class,ingress-controller,ingress-external-address,ingress-tcp,ingress-report-status,alb-ingress-class"}

	// No node yet: the controller's pod is Pending, the controller unavailable.
	expectReplayed(t, c, map[string]string{"ingress-class": "pass", "ingress-controller": "fail", "alb-ingress-class": "skip"}, base...)
	// Missing class.
	expectReplayed(t, c, map[string]string{"ingress-class": "fail", "ingress-controller": "skip"}, append(base, "--ingress-class", "nope")...)

	c.AddNode(t, testcluster.NodeSpec{Name: "aws-node", CPU: "4", Memory: "16Gi", ProviderID: "aws:///eu-west-1a/i-0abc"})
	waitAvailable(t, c, "ingress-nginx", "ingress-nginx-controller")
	expectReplayed(t, c, map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-tcp": "pass", "ingress-report-status": "pass"}, base...)
	setLoadBalancer(t, c, "ingress-nginx", "ingress-nginx-controller", "127.0.0.1")
	expectReplayed(t, c, map[string]string{"ingress-external-address": "pass"}, base...)

	// TCP annotations removed → fail; status updates disabled → fail.
	c.Kubectl(t, "annotate", "svc", "-n", "ingress-nginx", "ingress-nginx-controller",
		"service.beta.kubernetes.io/aws-load-balancer-backend-protocol-", "service.beta.kubernetes.io/aws-load-balancer-type-")
	c.Kubectl(t, "patch", "deploy", "-n", "ingress-nginx", "ingress-nginx-controller", "--type", "json",
		"-p", `[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--update-status=false"}]`)
	waitAvailable(t, c, "ingress-nginx", "ingress-nginx-controller")
	expectReplayed(t, c, map[string]string{"ingress-tcp": "fail", "ingress-report-status": "fail"}, base...)

	// TLS and reachability: local HTTPS servers reached through --connect-to.
	ca := newCA(t)
	now := time.Now()
	good, _ := ca.Leaf(t, host, now.Add(-time.Hour), now.Add(30*24*time.Hour))
	soon, _ := ca.Leaf(t, host, now.Add(-time.Hour), now.Add(3*24*time.Hour))
	expired, _ := ca.Leaf(t, host, now.Add(-48*time.Hour), now.Add(-time.Hour))
	wrong, _ := ca.Leaf(t, "other.example.test", now.Add(-time.Hour), now.Add(30*24*time.Hour))
	tlsOnly := []string{"--access-mode", "ingress", "--ingress-host", host, "--only", "ingress-tls,ingress-host-reachable", "--request-timeout", "5s"}
	via := func(port string) []string { return append(tlsOnly, "--connect-to", host+":443:127.0.0.1:"+port) }

	p := serveTLS(t, good)
	expectReplayed(t, c, map[string]string{"ingress-tls": "pass", "ingress-host-reachable": "pass"}, append(via(p), "--ca-file", ca.PEM)...)
	expectReplayed(t, c, map[string]string{"ingress-tls": "fail", "ingress-host-reachable": "fail"}, via(p)...) // unknown CA
	expectReplayed(t, c, map[string]string{"ingress-tls": "warn"}, append(via(serveTLS(t, soon)), "--ca-file", ca.PEM)...)
	expectReplayed(t, c, map[string]string{"ingress-tls": "fail"}, append(via(serveTLS(t, expired)), "--ca-file", ca.PEM)...)
	expectReplayed(t, c, map[string]string{"ingress-tls": "fail"}, append(via(serveTLS(t, wrong)), "--ca-file", ca.PEM)...)
	// Nothing listens: host unreachable.
	expectReplayed(t, c, map[string]string{"ingress-host-reachable": "fail"}, via("1")...)
	expectReplayed(t, c, map[string]string{"ingress-host-reachable": "skip"}, append(via("1"), "--skip-ingress-validation")...)
	// Host without DNS and no --connect-to: the controller's external
	// address (127.0.0.1, set above) is probed with SNI = host; port 443 is
	// not ours, so map only the address's port.
	res, doc := c.RunJSONReplayed(t, nil, append(tlsOnly, "--connect-to", "127.0.0.1:443:127.0.0.1:"+p, "--ca-file", ca.PEM)...)
	got := testcluster.Check(t, doc, "ingress-tls")
	if got.Status != "pass" || !strings.Contains(got.Message, "does not resolve") {
		t.Errorf("fallback to external address: %s %s\n%s", got.Status, got.Message, res.Stderr)
	}
}

// NGINX Community with the cloud manifest (a LoadBalancer Service, off AWS)
// and the bare-metal manifest (a NodePort Service, which never gets an
// external address): class, controller, external address and TCP.
func TestIngressNginxCloudAndBaremetal(t *testing.T) {
	testcluster.Parallel(t)
	only := []string{"--access-mode", "ingress", "--ingress-host", "runtime.example.test", "--skip-ingress-validation",
		"--only", "ingress-class,ingress-controller,ingress-external-address,ingress-tcp,ingress-report-status"}

	t.Run("cloud", func(t *testing.T) {
		// As TestIngressNginxCommunity: only the load balancer address is
		// written by the test.
		c := testcluster.Start(t)
		applyUpstream(t, c, "ingress-nginx/cloud.yaml")
		expectReplayed(t, c, map[string]string{"ingress-class": "pass", "ingress-controller": "fail", "ingress-tcp": "skip"}, only...)
		c.AddNode(t, testcluster.NodeSpec{Name: "gke-node", CPU: "4", Memory: "16Gi", ProviderID: "gce://project/europe-west1-b/gke-node"})
		waitAvailable(t, c, "ingress-nginx", "ingress-nginx-controller")
		expectReplayed(t, c, map[string]string{"ingress-controller": "pass", "ingress-external-address": "fail", "ingress-report-status": "pass"}, only...)
		setLoadBalancer(t, c, "ingress-nginx", "ingress-nginx-controller", "127.0.0.1")
		expectReplayed(t, c, map[string]string{"ingress-external-address": "pass", "ingress-tcp": "skip"}, only...)
	})

	t.Run("baremetal", func(t *testing.T) {
		c := testcluster.Start(t)
		c.AddNode(t, testcluster.NodeSpec{Name: "metal-1", CPU: "4", Memory: "16Gi"})
		applyUpstream(t, c, "ingress-nginx/baremetal.yaml")
		waitAvailable(t, c, "ingress-nginx", "ingress-nginx-controller")
		_, doc := c.RunJSONReplayed(t, nil, only...)
		wantStatus(t, doc, "ingress-class", "pass")
		wantStatus(t, doc, "ingress-controller", "pass")
		addr := wantStatus(t, doc, "ingress-external-address", "fail")
		if !strings.Contains(addr.Message+addr.Hint, "ingress-nginx-controller") {
			t.Errorf("external-address does not name the controller Service: %q / %q", addr.Message, addr.Hint)
		}
	})
}
