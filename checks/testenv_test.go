package checks

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// fakeEnv returns an Env over a fake clientset holding objs, with the chart's
// default inputs and the given server gitVersion.
func fakeEnv(t *testing.T, gitVersion string, objs ...runtime.Object) (*Env, *fake.Clientset) {
	t.Helper()
	kube := fake.NewClientset(objs...)
	disc := kube.Discovery().(*fakediscovery.FakeDiscovery)
	disc.FakedServerVersion = &version.Info{GitVersion: gitVersion, Major: "1", Minor: "30"}
	clients := &cluster.Clients{Kube: kube, Discovery: disc}
	env := &Env{
		Inputs:  Inputs{RuntimeName: DefaultRuntimeName, Namespace: DefaultNamespace, ReleaseName: DefaultReleaseName},
		Cluster: cluster.NewSnapshot(context.Background(), clients),
	}
	env.withDefaults()
	return env, kube
}

// runThrough runs c alone on env through the runner, as a run does
// (applicability first, errors resolved to skip or error), and returns its
// result.
func runThrough(t *testing.T, c Check, env *Env) Result {
	t.Helper()
	return Run(t.Context(), env, []Check{c}, RunOptions{})[0].Result
}
