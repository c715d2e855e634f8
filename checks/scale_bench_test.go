package checks

import (
	"fmt"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Benchmarks of the pure functions every run applies to whole lists, at the
// scale of make bench (5,000 nodes, 10,000 Deployments). They measure; they
// assert only that the result is the expected one, never a duration.

// scaleNodes returns n node summaries shaped like a large cluster: most Ready
// and schedulable, some NotReady, cordoned or tainted; the last one is the
// largest.
func scaleNodes(n int) []cluster.Node {
	nodes := make([]cluster.Node, n)
	for i := range nodes {
		nodes[i] = cluster.Node{
			Name:                   fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i/256, i%256),
			Ready:                  i%50 != 0,
			Unschedulable:          i%97 == 0,
			AllocatableMilliCPU:    3920,
			AllocatableMemoryBytes: 15_398_002_688,
			ProviderID:             fmt.Sprintf("aws:///eu-west-1a/i-%017x", i),
		}
		if i%31 == 0 {
			nodes[i].Taints = []string{"dedicated=gpu:NoSchedule"}
		}
	}
	nodes[n-1].Ready, nodes[n-1].Unschedulable, nodes[n-1].Taints = true, false, nil
	nodes[n-1].AllocatableMilliCPU = 64000
	return nodes
}

func BenchmarkEvaluateNodes(b *testing.B) {
	nodes := scaleNodes(5000)
	b.ReportAllocs()
	for b.Loop() {
		v := EvaluateNodes(nodes)
		if v.Total != 5000 || v.Best.Name != nodes[4999].Name {
			b.Fatalf("verdict %+v", v)
		}
	}
}

// scaleDeployments returns n unrelated Deployment summaries plus one
// sealed-secrets controller.
func scaleDeployments(n int) []cluster.Workload {
	ws := make([]cluster.Workload, n)
	for i := range ws {
		app := fmt.Sprintf("app-%05d", i)
		ws[i] = cluster.Workload{
			Kind: cluster.KindDeployment, Namespace: fmt.Sprintf("bench-%04d", i%2000), Name: app,
			Labels:     map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "service-1.4.2"},
			PodLabels:  map[string]string{"app.kubernetes.io/name": app},
			Containers: []cluster.Container{{Name: "app", Image: fmt.Sprintf("registry.example.com/team-%03d/%s:1.4.2", i%150, app), Args: []string{"--port=8080"}}},
		}
	}
	ws[n-1] = cluster.Workload{Kind: cluster.KindDeployment, Namespace: "kube-system", Name: "sealed-secrets-controller",
		Containers: []cluster.Container{{Image: "docker.io/bitnami/sealed-secrets-controller:0.27.1"}}}
	return ws
}

func BenchmarkFindSealedSecretsControllers(b *testing.B) {
	ws := scaleDeployments(10000)
	b.ReportAllocs()
	for b.Loop() {
		if n := len(FindSealedSecretsControllers(ws)); n != 1 {
			b.Fatalf("found %d, want 1", n)
		}
	}
}

// BenchmarkCheckCRDOwnership: 300 CRDs, of which the Argo CD and Argo
// Rollouts ones (argoproj.io) carry no Helm ownership.
func BenchmarkCheckCRDOwnership(b *testing.B) {
	var crds []cluster.CRD
	for i := 0; i < 290; i++ {
		crds = append(crds, cluster.CRD{Name: fmt.Sprintf("widgets%03d.team%02d.example.com", i, i%10), Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}})
	}
	for _, n := range []string{"applications", "applicationsets", "appprojects", "rollouts", "analysisruns", "analysistemplates", "clusteranalysistemplates", "experiments", "workflows", "eventsources"} {
		crds = append(crds, cluster.CRD{Name: n + ".argoproj.io"})
	}
	b.ReportAllocs()
	for b.Loop() {
		argo, problems := CheckCRDOwnership(crds, DefaultReleaseName, DefaultNamespace)
		if argo != 10 || len(problems) != 10 {
			b.Fatalf("argo %d, problems %d", argo, len(problems))
		}
	}
}
