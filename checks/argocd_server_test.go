package checks

import (
	"fmt"
	"testing"
)

// argoServerYAML is Argo CD's server Service and Deployment in ns, with image.
func argoServerYAML(ns, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  namespace: %[1]s
  name: argocd-server
  labels: {app.kubernetes.io/component: server, app.kubernetes.io/part-of: argocd}
spec: {selector: {app.kubernetes.io/name: argocd-server}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  namespace: %[1]s
  name: argocd-server
  labels: {app.kubernetes.io/component: server, app.kubernetes.io/part-of: argocd, app.kubernetes.io/name: argocd-server}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: argocd-server}}
  template:
    metadata: {labels: {app.kubernetes.io/name: argocd-server}}
    spec:
      containers: [{name: argocd-server, image: %[2]q}]
`, ns, image)
}

func argoCMYAML(ns string, data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: %s, name: argocd-cm}\ndata: %s\n", ns, data)
}

// argoCase is one case of the existing-Argo-CD checks: inputs, the cluster
// as YAML, and the expected outcome.
type argoCase struct {
	name string
	in   Inputs
	yaml []string
	want outcome
}

// runArgoCases runs c through the kit for each case.
func runArgoCases(t *testing.T, c Check, cases []argoCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.expect(t, newKit(t, tt.yaml...).with(tt.in).run(c))
		})
	}
}

// existingArgoCD is the plan of an install into Argo CD's namespace with
// --existing-argocd.
func existingArgoCD() Inputs { return Inputs{ExistingArgoCD: true, Namespace: "argocd"} }

// TestArgoCDServer: the server Service in the runtime namespace.
func TestArgoCDServer(t *testing.T) {
	existing := existingArgoCD()
	server := argoServerYAML("argocd", "quay.io/argoproj/argocd:v3.1.5")
	runArgoCases(t, ArgoCDServerCheck(), []argoCase{
		{"server found", existing, []string{server}, outcome{StatusPass, []string{"Service argocd/argocd-server"}}},
		{"server elsewhere", existing, []string{argoServerYAML("other", "quay.io/argoproj/argocd:v3.1.5")},
			outcome{StatusFail, []string{"no Service labelled app.kubernetes.io/component=server,app.kubernetes.io/part-of=argocd in namespace argocd"}}},
		{"server: chart installs Argo CD", Inputs{Namespace: "argocd"}, []string{server},
			outcome{StatusSkip, []string{NotApplicable + "Argo CD is installed by the chart (argo-cd.enabled=true); this check is for --existing-argocd"}}},
	})
}
