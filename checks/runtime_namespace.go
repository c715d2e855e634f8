package checks

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// RuntimeNamespace passes when the runtime namespace is a valid DNS-1123 label
// ("The Namespace must conform to the naming conventions for Kubernetes
// objects", https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Step 3", Namespace) and, if it
// exists, is not Terminating. It warns when the namespace already holds
// Deployments or StatefulSets that are not from the runtime's release.
func RuntimeNamespace() Check {
	return Check{
		Meta: Meta{
			ID:       "runtime-namespace",
			Impact:   ImpactInstallFails,
			Category: CategoryInputs,
			Modes:    ModePre,
			Title:    "Runtime namespace is valid and usable",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runRuntimeNamespace,
	}
}

func runRuntimeNamespace(_ context.Context, env *Env) (Result, error) {
	name := env.Inputs.Namespace
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return Fail("namespace %q is not a valid DNS-1123 label: %s", name, strings.Join(errs, "; ")).
			WithHint("use lower-case letters, digits and '-', at most 63 characters, starting and ending with a letter or digit"), nil
	}
	ns, err := env.Cluster.Namespace(name)
	if err != nil {
		return Result{}, err
	}
	ref := ObjectRef{Kind: "Namespace", Name: name}
	if !ns.Exists {
		return Pass("namespace %s does not exist yet (helm install --create-namespace creates it)", name), nil
	}
	if ns.Terminating {
		return Fail("namespace %s is Terminating", name).
			WithHint(fmt.Sprintf("wait until it is gone (kubectl get ns %s) or pick another namespace; a stuck namespace usually has finalizers left on its objects", name)).
			WithObjects(ref), nil
	}
	foreign, err := foreignWorkloads(env, name)
	if err != nil {
		return Result{}, err
	}
	if len(foreign) > 0 {
		return Warn("namespace %s already holds %d workload(s) not from release %s: %s", name, len(foreign), env.Inputs.ReleaseName, refList(foreign, 5)).
			WithHint("install the runtime into its own namespace (-n) unless these belong with it").
			WithObjects(foreign...), nil
	}
	return Pass("namespace %s exists, is Active and holds no other workloads", name).WithObjects(ref), nil
}

// foreignWorkloads lists Deployments and StatefulSets in ns whose Helm release
// annotation does not name the runtime's release.
func foreignWorkloads(env *Env, ns string) ([]ObjectRef, error) {
	var out []ObjectRef
	for _, list := range []func() ([]cluster.Workload, error){env.Cluster.Deployments, env.Cluster.StatefulSets} {
		ws, err := list()
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.Namespace != ns || w.Annotations["meta.helm.sh/release-name"] == env.Inputs.ReleaseName {
				continue
			}
			out = append(out, ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
		}
	}
	return out, nil
}

// refList renders up to n object references, then "and N more".
func refList(refs []ObjectRef, n int) string {
	parts := make([]string, 0, n+1)
	for i, r := range refs {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(refs)-n))
			break
		}
		parts = append(parts, r.Kind+"/"+r.Name)
	}
	return strings.Join(parts, ", ")
}
