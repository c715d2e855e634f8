package checks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		`userToken: {token: abc123}`:           `userToken: {token: ***}`,
		`  token: "s3cr3t"`:                    `  token: "***"`,
		`PASSWORD=hunter2 next`:                `PASSWORD=*** next`,
		`Authorization: Bearer eyJhbGciOi.x.y`: `Authorization: Bearer ***`,
		`failed validating file "values.yaml"`: `failed validating file "values.yaml"`,
		`missing "global.runtime.name" field`:  `missing "global.runtime.name" field`,
	} {
		if got := RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDescribePod(t *testing.T) {
	for _, tc := range []struct {
		pod  cluster.Pod
		want string
	}{
		{cluster.Pod{Phase: corev1.PodPending, Unschedulable: true, SchedulerMessage: "0/3 nodes are available: 3 Insufficient cpu."},
			"Pending, not scheduled: 0/3 nodes are available: 3 Insufficient cpu."},
		{cluster.Pod{Containers: []cluster.ContainerState{{Name: "manager", Waiting: "CrashLoopBackOff", Terminated: "Error", ExitCode: 1, RestartCount: 7}}},
			"container manager: CrashLoopBackOff, last terminated Error, exit code 1, 7 restarts"},
		{cluster.Pod{Containers: []cluster.ContainerState{{Name: "init", Init: true, Waiting: "ImagePullBackOff", WaitingMessage: "Back-off pulling image \"x\""}, {Name: "app", Ready: true}}},
			`init container init: ImagePullBackOff (Back-off pulling image "x")`},
		{cluster.Pod{Phase: corev1.PodRunning}, "Running"},
	} {
		if got := DescribePod(tc.pod); got != tc.want {
			t.Errorf("DescribePod = %q, want %q", got, tc.want)
		}
	}
}

func TestIstioRoutes(t *testing.T) {
	ir := []cluster.Destination{{Host: "internal-router", Port: 80}}
	routes := []cluster.HTTPRoute{
		{URIs: []cluster.URIMatch{{Kind: "prefix", Value: "/webhooks"}}, Destinations: ir},
		{URIs: []cluster.URIMatch{{Kind: "exact", Value: "/app-proxy"}}, Destinations: []cluster.Destination{{Host: "cap-app-proxy", Port: 3017}}},
	}
	var problems []string
	for _, p := range InternalRouterPaths {
		problems = append(problems, routeProblem(routes, p, "internal-router", 80, "codefresh")...)
	}
	want := "/app-proxy goes to cap-app-proxy:3017 (want internal-router:80); /workflows is not routed (want internal-router:80)"
	if got := strings.Join(problems, "; "); got != want {
		t.Fatalf("problems = %q\nwant       %q", got, want)
	}
	all := []cluster.HTTPRoute{{Destinations: []cluster.Destination{{Host: "internal-router.codefresh.svc.cluster.local"}}}}
	for _, p := range InternalRouterPaths {
		if pr := routeProblem(all, p, "internal-router", 80, "codefresh"); pr != nil {
			t.Fatalf("catch-all route to internal-router: %v", pr)
		}
	}
	legacy := []cluster.HTTPRoute{
		{URIs: []cluster.URIMatch{{Kind: "prefix", Value: "/app-proxy"}}, Destinations: []cluster.Destination{{Host: "cap-app-proxy", Port: 3017}}},
		{URIs: []cluster.URIMatch{{Kind: "prefix", Value: "/webhooks/rt/push-github"}}, Destinations: []cluster.Destination{{Host: "push-github-eventsource-svc", Port: 80}}},
		{URIs: []cluster.URIMatch{{Kind: "prefix", Value: "/webhooks/rt/other"}}, Destinations: []cluster.Destination{{Host: "push-github-eventsource-svc", Port: 80}}},
	}
	got := legacyRouteProblems(legacy, "rt")
	if len(got) != 1 || !strings.Contains(got[0], "/webhooks/rt/other goes to push-github-eventsource-svc") {
		t.Fatalf("legacy problems = %v", got)
	}
	if !hostMatches([]string{"*.example.com"}, "rt.example.com") || hostMatches([]string{"other.com"}, "rt.example.com") {
		t.Fatal("hostMatches")
	}
}

func TestIsRolloutsController(t *testing.T) {
	for img, want := range map[string]bool{
		"quay.io/argoproj/argo-rollouts:v1.7.2":      true,
		"quay.io/codefresh/argo-rollouts@sha256:abc": true,
		"argo-rollouts": true,
		"quay.io/argoproj/kubectl-argo-rollouts:v1.7.2": false,
		"localhost:5000/argo-rollouts-extension:1":      false,
	} {
		w := cluster.Workload{Containers: []cluster.Container{{Image: img}}}
		if got := IsRolloutsController(w); got != want {
			t.Errorf("IsRolloutsController(%s) = %v", img, got)
		}
	}
	if !IsRolloutsController(cluster.Workload{Labels: map[string]string{"app.kubernetes.io/component": "rollouts-controller"}}) {
		t.Error("label not recognised")
	}
}
