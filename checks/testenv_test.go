package checks

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeEnv returns an Env over the kit's fakes holding objs, with the
// chart's default inputs and the given server gitVersion. It is newKit
// in the older form many tests use; prefer newKit(t, yaml...) in new tests.
func fakeEnv(t *testing.T, gitVersion string, objs ...runtime.Object) (*Env, *fake.Clientset) {
	t.Helper()
	k := newKit(t).serverVersion(gitVersion).objects(objs...)
	return k.env(), k.Kube
}

// runThrough runs c alone on env through the runner, as a run does
// (applicability first, errors resolved to skip or error), and returns its
// result.
func runThrough(t *testing.T, c Check, env *Env) Result {
	t.Helper()
	return Run(t.Context(), env, []Check{c}, RunOptions{})[0].Result
}
