package checks

import (
	"fmt"
	"strings"
	"testing"
)

// ingressClassYAML is an IngressClass of controller.
func ingressClassYAML(name, controller string) string {
	return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: %s}\nspec: {controller: %s}\n", name, controller)
}

// controllerYAML is a one-container Deployment (or DaemonSet) with image,
// args and pod labels, available replicas of 1 desired.
func controllerYAML(kind, ns, name, image string, args []string, podLabels map[string]string, available int) string {
	var labels []string
	for k, v := range podLabels {
		labels = append(labels, fmt.Sprintf("%q: %q", k, v))
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	status := fmt.Sprintf("status: {availableReplicas: %d}", available)
	spec := "replicas: 1\n  "
	if kind == "DaemonSet" {
		status = fmt.Sprintf("status: {desiredNumberScheduled: 1, numberAvailable: %d}", available)
		spec = ""
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: %s
metadata: {namespace: %s, name: %s}
spec:
  %sselector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s, %s}}
    spec:
      containers:
      - name: controller
        image: %s
        args: [%s]
%s
`, kind, ns, name, spec, name, name, strings.Join(labels, ", "), image, strings.Join(quoted, ", "), status)
}

// TestIngressController: the controller workload serving the planned
// IngressClass (which one does, per supported controller, is
// ingressclass.ServesClass's test), and whether it is available.
func TestIngressController(t *testing.T) {
	ingress := func(class string) Inputs {
		return Inputs{AccessMode: AccessIngress, IngressClass: class, IngressHost: "rt.example.com"}
	}
	nginxImage := "registry.k8s.io/ingress-nginx/controller:v1.12.0@sha256:abc"
	tests := []struct {
		name  string
		in    Inputs
		yaml  []string
		want  outcome
		wantN int // objects reported: the workloads, or the IngressClass none serves
	}{
		{"ingress-nginx available", ingress("nginx"), []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
			controllerYAML("Deployment", "ingress-nginx", "my-ctrl", nginxImage, []string{"/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/x"}, nil, 1),
		}, outcome{StatusPass, []string{"NGINX Community (ingress-nginx) controller: Deployment/ingress-nginx/my-ctrl (1/1 available)"}}, 1},
		{"ingress-nginx not available", ingress("nginx"), []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
			controllerYAML("Deployment", "ingress-nginx", "ctrl", nginxImage, nil, nil, 0),
		}, outcome{StatusFail, []string{"has no available replica", "Deployment/ingress-nginx/ctrl (0/1 available)", "kubectl describe deployment -n ingress-nginx ctrl"}}, 1},
		{"a workload named like a controller is not one", ingress("nginx"), []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
			controllerYAML("Deployment", "ingress-nginx", "ingress-nginx-controller", "busybox:1.36", nil, nil, 1),
		}, outcome{StatusFail, []string{"no NGINX Community (ingress-nginx) controller workload"}}, 1},
		{"NGINX by F5 serves the class its -ingress-class names", ingress("f5"), []string{
			ingressClassYAML("f5", ControllerNginxF5),
			controllerYAML("DaemonSet", "nginx", "nic", "nginx/nginx-ingress:4.0.0", []string{"-nginx-configmaps=$(POD_NAMESPACE)/cm", "-ingress-class=f5"}, nil, 1),
		}, outcome{StatusPass, []string{"NGINX by F5 (NGINX Enterprise) controller: DaemonSet/nginx/nic (1/1 available)"}}, 1},
		{"two controllers, one available", ingress("nginx"), []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
			controllerYAML("Deployment", "a", "down", nginxImage, nil, nil, 0),
			controllerYAML("DaemonSet", "b", "up", nginxImage, nil, nil, 1),
		}, outcome{StatusPass, []string{"DaemonSet/b/up (1/1 available)"}}, 2},
		{"class missing: ingress-class reports it", ingress("nope"), []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
		}, outcome{StatusSkip, []string{"IngressClass nope does not exist (see ingress-class)"}}, 0},
		{"tunnel mode: not applicable", Inputs{AccessMode: AccessTunnel}, nil,
			outcome{StatusSkip, []string{NotApplicable + "access mode is tunnel; this check is for ingress"}}, 0},
		{"service-mesh mode: not applicable", Inputs{AccessMode: AccessServiceMesh, IngressURL: "https://rt.example.com"}, []string{
			ingressClassYAML("nginx", ControllerNginxCommunity),
		}, outcome{StatusSkip, []string{NotApplicable + "access mode is service-mesh"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newKit(t, tt.yaml...).with(tt.in).run(IngressControllerCheck())
			tt.want.expect(t, r)
			if len(r.Objects) != tt.wantN {
				t.Errorf("objects %v, want %d", r.Objects, tt.wantN)
			}
		})
	}
}

// TestIngressControllerForbidden: without permission to list Deployments,
// the check ends skip with the reason, never error.
func TestIngressControllerForbidden(t *testing.T) {
	k := newKit(t, ingressClassYAML("nginx", ControllerNginxCommunity)).with(Inputs{AccessMode: AccessIngress, IngressClass: "nginx"})
	env := k.env()
	k.Kube.PrependReactor("list", "deployments", func(a k8sAction) (bool, runtimeObject, error) {
		return true, nil, errorsForbidden("deployments")
	})
	outcome{StatusSkip, []string{"no permission to list deployments"}}.expect(t, runThrough(t, IngressControllerCheck(), env))
}
