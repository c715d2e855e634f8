package checks

import (
	"context"
	"errors"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

func TestServerSemver(t *testing.T) {
	tests := []struct {
		info version.Info
		want string
	}{
		{version.Info{GitVersion: "v1.29.3-eks-4f4795d"}, "1.29.3"},
		{version.Info{GitVersion: "v1.28.5-gke.1217000"}, "1.28.5"},
		{version.Info{GitVersion: "v1.30.2+k3s1"}, "1.30.2"},
		{version.Info{GitVersion: "v1.27.6+f67aeb3"}, "1.27.6"},
		{version.Info{GitVersion: "v1.22.17"}, "1.22.17"},
		{version.Info{GitVersion: "v1.23.0-alpha.1"}, "1.23.0"},
		{version.Info{GitVersion: "weird", Major: "1", Minor: "26+"}, "1.26.0"},
	}
	for _, tt := range tests {
		got, err := ServerSemver(&tt.info)
		if err != nil || got.String() != tt.want {
			t.Errorf("ServerSemver(%q) = %v, %v; want %s", tt.info.GitVersion, got, err, tt.want)
		}
	}
	if _, err := ServerSemver(&version.Info{GitVersion: "weird", Major: "x"}); err == nil {
		t.Error("ServerSemver(unparseable) = nil error")
	}
}

func TestKubernetesVersion(t *testing.T) {
	tests := []struct {
		git  string
		want Status
	}{
		{"v1.29.3-eks-4f4795d", StatusPass},
		// Above the docs' minimum, below the default chart's Argo CD
		// subchart's kubeVersion (TestKubernetesVersionFromTheChart).
		{"v1.23.0", StatusWarn},
		{"v1.22.17-gke.100", StatusFail},
		{"v1.18.0", StatusFail},
	}
	for _, tt := range tests {
		env, _ := fakeEnv(t, tt.git)
		got, err := runKubernetesVersion(t.Context(), env)
		if err != nil || got.Status != tt.want || !strings.Contains(got.Message, tt.git) {
			t.Errorf("kubernetes-version(%s) = %s %q, %v; want %s naming the version", tt.git, got.Status, got.Message, err, tt.want)
		}
	}
}

func node(name, cpu, mem string, mut ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, m := range mut {
		m(n)
	}
	return n
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }
func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }
func tainted(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: effect}} }
}

func TestNodeResources(t *testing.T) {
	tests := []struct {
		name    string
		nodes   []runtime.Object
		want    Status
		wantMsg []string
	}{
		{"one big node", []runtime.Object{node("small", "1", "2Gi"), node("big", "4", "16Gi")}, StatusPass, []string{"1 of 2 nodes qualify", "big"}},
		{"exactly the minimum", []runtime.Object{node("edge", "2", "5000M")}, StatusPass, []string{"edge"}},
		{"memory just short", []runtime.Object{node("n", "2", "4999M")}, StatusFail, []string{"best: n", "memory 4999M"}},
		{"cpu short", []runtime.Object{node("n", "1500m", "8Gi")}, StatusFail, []string{"cpu 1500m"}},
		{"big node cordoned", []runtime.Object{node("small", "1", "2Gi"), node("big", "8", "32Gi", cordoned)}, StatusFail, []string{"1 cordoned", "best: small"}},
		{"big node NoSchedule", []runtime.Object{node("big", "8", "32Gi", tainted(corev1.TaintEffectNoSchedule))}, StatusFail, []string{"no Ready, schedulable node", "1 NoSchedule-tainted"}},
		{"PreferNoSchedule still counts", []runtime.Object{node("big", "8", "32Gi", tainted(corev1.TaintEffectPreferNoSchedule))}, StatusPass, []string{"big"}},
		{"big node NotReady", []runtime.Object{node("big", "8", "32Gi", notReady)}, StatusFail, []string{"1 not Ready"}},
		{"no nodes", nil, StatusFail, []string{"no nodes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0", tt.nodes...)
			got, err := runNodeResources(t.Context(), env)
			if err != nil || got.Status != tt.want {
				t.Fatalf("node-resources = %s %q, %v; want %s", got.Status, got.Message, err, tt.want)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q does not contain %q", got.Message, w)
				}
			}
		})
	}
}

func TestClusterAdmin(t *testing.T) {
	t.Run("cluster-admin", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		allow(kube, func(a *authorizationv1.ResourceAttributes) bool { return true })
		got, err := runClusterAdmin(t.Context(), env)
		if err != nil || got.Status != StatusPass {
			t.Fatalf("cluster-admin = %s %q, %v; want pass", got.Status, got.Message, err)
		}
	})
	t.Run("namespace admin only", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		var reviews []authorizationv1.ResourceAttributes
		allow(kube, func(a *authorizationv1.ResourceAttributes) bool {
			reviews = append(reviews, *a)
			return a.Namespace == DefaultNamespace && a.Resource != "*"
		})
		got, err := runClusterAdmin(t.Context(), env)
		if err != nil || got.Status != StatusFail {
			t.Fatalf("cluster-admin = %s %q, %v; want fail", got.Status, got.Message, err)
		}
		for _, w := range []string{"missing 9 of 29", "create,update,delete customresourcedefinitions.apiextensions.k8s.io", "clusterroles.rbac.authorization.k8s.io", "clusterrolebindings"} {
			if !strings.Contains(got.Message, w) {
				t.Errorf("message %q does not contain %q", got.Message, w)
			}
		}
		if strings.Contains(got.Message, "pods") {
			t.Errorf("message %q lists an allowed permission", got.Message)
		}
		if len(reviews) != 1+len(RequiredPermissions()) {
			t.Errorf("sent %d reviews, want %d", len(reviews), 1+len(RequiredPermissions()))
		}
	})
	t.Run("reviews forbidden", func(t *testing.T) {
		env, kube := fakeEnv(t, "v1.30.0")
		kube.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, forbiddenErr("selfsubjectaccessreviews")
		})
		got := Run(t.Context(), env, []Check{ClusterAdmin()}, RunOptions{})
		if got[0].Status != StatusSkip || !strings.Contains(got[0].Message, "no permission to create selfsubjectaccessreviews") {
			t.Fatalf("cluster-admin without SSAR rights = %s %q, want skip", got[0].Status, got[0].Message)
		}
	})
}

// An anonymous caller fails cluster-admin, whether the SelfSubjectReview
// answers with system:anonymous or is refused naming it.
func TestClusterAdminAnonymous(t *testing.T) {
	for name, react := range map[string]k8stesting.ReactionFunc{
		"review answers": func(a k8stesting.Action) (bool, runtime.Object, error) {
			out := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.SelfSubjectReview).DeepCopy()
			out.Status.UserInfo.Username = AnonymousUser
			return true, out, nil
		},
		"review refused": func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "", errors.New(`User "system:anonymous" cannot create resource "selfsubjectreviews"`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			env, kube := fakeEnv(t, "v1.30.0")
			kube.PrependReactor("create", "selfsubjectreviews", react)
			allow(kube, func(*authorizationv1.ResourceAttributes) bool { return false })
			got := Run(t.Context(), env, []Check{ClusterAdmin()}, RunOptions{})
			if got[0].Status != StatusFail || !strings.Contains(got[0].Message, "system:anonymous") || !strings.Contains(got[0].Hint, "kubectl auth whoami") {
				t.Fatalf("cluster-admin = %s %q (hint %q), want fail naming system:anonymous", got[0].Status, got[0].Message, got[0].Hint)
			}
		})
	}
}

func allow(kube interface {
	PrependReactor(verb, resource string, f k8stesting.ReactionFunc)
}, decide func(*authorizationv1.ResourceAttributes) bool) {
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ssar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		out := ssar.DeepCopy()
		out.Status.Allowed = decide(ssar.Spec.ResourceAttributes)
		return true, out, nil
	})
}

func forbiddenErr(resource string) error {
	return &cluster.ListError{Verb: "create", Resource: resource, Err: errorsForbidden(resource)}
}

func TestHelmVersion(t *testing.T) {
	tests := []struct {
		name     string
		helmBin  string
		onPath   bool
		output   string
		cmdErr   error
		want     Status
		wantText string
	}{
		{"HELM_BIN new", "/opt/helm", false, "v3.14.2+gc309b6f\n", nil, StatusPass, "v3.14.2"},
		{"PATH helm 4", "", true, "v4.0.1+g123\n", nil, StatusPass, "v4.0.1"},
		{"old helm", "", true, "v3.7.2+g663a896\n", nil, StatusFail, "older than 3.11.0"},
		// The docs' 3.8.0 is below the chart README's 3.11.0.
		{"docs minimum", "", true, "v3.10.3+g8a6b2f4\n", nil, StatusFail, `older than 3.11.0 (the gitops-runtime chart's README, "Prerequisites": Helm 3.11.0+`},
		{"helm 2", "", true, "Client: v2.16.1+gbbdfe5e\n", nil, StatusFail, "older than 3.11.0"},
		// Every form Helm 3 and 4 print: from source without ldflags (no
		// patch), releases (+g<commit>), pre-releases, the long form.
		{"helm 4 from source", "/opt/helm", false, "v4.3\n", nil, StatusPass, "helm v4.3 ("},
		{"helm 3 from source", "", true, "v3.22\n", nil, StatusPass, "helm v3.22 ("},
		{"helm 4 release", "", true, "v4.3.1+g5b7d2a1\n", nil, StatusPass, "helm v4.3.1+g5b7d2a1 ("},
		{"helm 3 release", "", true, "v3.22.0+gabc\n", nil, StatusPass, "helm v3.22.0+gabc ("},
		{"helm 4 rc", "", true, "v4.0.0-rc.1+gabc\n", nil, StatusPass, "v4.0.0-rc.1"},
		{"minimum", "", true, "v3.11.0+g472c573\n", nil, StatusPass, "v3.11.0"},
		{"minimum from source", "", true, "v3.11\n", nil, StatusPass, "v3.11 ("},
		{"old from source", "", true, "v3.7\n", nil, StatusFail, "v3.7 (/usr/local/bin/helm) is older than 3.11.0"},
		{"3.11 pre-release", "", true, "v3.11.0-rc.1\n", nil, StatusFail, "older than 3.11.0"},
		{"warning first", "", true, "WARNING: Kubernetes configuration file is group-readable\nv3.22.0+gabc\n", nil, StatusPass, "v3.22.0"},
		{"long form", "", true, `version.BuildInfo{Version:"v4.3.1", GitCommit:"", GitTreeState:"clean"}` + "\n", nil, StatusPass, "v4.3.1"},
		{"absent", "", false, "", nil, StatusWarn, "no helm client"},
		{"broken", "", true, "", errors.New("exec format error"), StatusFail, "did not report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0")
			env.Getenv = func(k string) string {
				if k == "HELM_BIN" {
					return tt.helmBin
				}
				return ""
			}
			env.LookPath = func(string) (string, error) {
				if tt.onPath {
					return "/usr/local/bin/helm", nil
				}
				return "", errors.New("not found")
			}
			var ranWith string
			env.Command = func(_ context.Context, name string, args ...string) ([]byte, error) {
				ranWith = name + " " + strings.Join(args, " ")
				return []byte(tt.output), tt.cmdErr
			}
			got, err := runHelmVersion(t.Context(), env)
			if err != nil || got.Status != tt.want || !strings.Contains(got.Message, tt.wantText) {
				t.Fatalf("helm-version = %s %q, %v; want %s containing %q", got.Status, got.Message, err, tt.want, tt.wantText)
			}
			if tt.helmBin != "" && !strings.HasPrefix(ranWith, tt.helmBin+" ") {
				t.Errorf("ran %q, want $HELM_BIN %s", ranWith, tt.helmBin)
			}
		})
	}
}

func TestRuntimeName(t *testing.T) {
	for name, want := range map[string]Status{
		"codefresh": StatusPass, "a": StatusPass, "prod2": StatusPass,
		strings.Repeat("a", 38): StatusPass, strings.Repeat("a", 39): StatusFail,
		"": StatusFail, "2prod": StatusFail, "Prod": StatusFail, "my-runtime": StatusFail, "my_rt": StatusFail,
	} {
		env, _ := fakeEnv(t, "v1.30.0")
		env.Inputs.RuntimeName = name
		got, err := runRuntimeName(t.Context(), env)
		if err != nil || got.Status != want {
			t.Errorf("runtime-name(%q) = %s %q, %v; want %s", name, got.Status, got.Message, err, want)
		}
	}
}

func TestRuntimeNamespace(t *testing.T) {
	ns := func(name string, phase corev1.NamespacePhase) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}
	}
	tests := []struct {
		name    string
		input   string
		objs    []runtime.Object
		want    Status
		wantMsg string
	}{
		{"absent", "codefresh", nil, StatusPass, "does not exist yet"},
		{"active and empty", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive)}, StatusPass, "is Active"},
		{"terminating", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceTerminating)}, StatusFail, "Terminating"},
		{"invalid", "Code_Fresh", nil, StatusFail, "not a valid DNS-1123 label"},
		{"too long", strings.Repeat("a", 64), nil, StatusFail, "not a valid DNS-1123 label"},
		{"foreign workload", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive), deployment("codefresh", "redis", nil)}, StatusWarn, "Deployment/redis"},
		{"own release workload", "codefresh", []runtime.Object{ns("codefresh", corev1.NamespaceActive),
			deployment("codefresh", "cap-app-proxy", map[string]string{"meta.helm.sh/release-name": DefaultReleaseName})}, StatusPass, "is Active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, _ := fakeEnv(t, "v1.30.0", tt.objs...)
			env.Inputs.Namespace = tt.input
			got, err := runRuntimeNamespace(t.Context(), env)
			if err != nil || got.Status != tt.want || !strings.Contains(got.Message, tt.wantMsg) {
				t.Fatalf("runtime-namespace = %s %q, %v; want %s containing %q", got.Status, got.Message, err, tt.want, tt.wantMsg)
			}
		})
	}
}

// TestHelmVersionUnreadable: output without a version is an error (the check
// ends in "error", exit 1), never a guess.
func TestHelmVersionUnreadable(t *testing.T) {
	for _, out := range []string{"", "helm\n", "3.22.0\n", "Error: unknown flag: --short\n"} {
		env, _ := fakeEnv(t, "v1.30.0")
		env.Getenv = func(string) string { return "/opt/helm" }
		env.Command = func(context.Context, string, ...string) ([]byte, error) { return []byte(out), nil }
		got, err := runHelmVersion(t.Context(), env)
		if err == nil || !strings.Contains(err.Error(), "cannot find a version") {
			t.Errorf("output %q: got %s %q, %v; want the error \"cannot find a version\"", out, got.Status, got.Message, err)
		}
	}
}
