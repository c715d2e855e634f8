package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/apply"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// ArgoComponent is an Argo Project component a clean-cluster install must not
// find: "the cluster should not have any Argo Project components: Argo
// Rollouts, Argo CD, Argo Events, and Argo Workflows" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Argo Project components").
type ArgoComponent string

// Argo Project components. ArgoProject is any other quay.io/argoproj image.
const (
	ArgoCD        ArgoComponent = "Argo CD"
	ArgoRollouts  ArgoComponent = "Argo Rollouts"
	ArgoEvents    ArgoComponent = "Argo Events"
	ArgoWorkflows ArgoComponent = "Argo Workflows"
	ArgoProject   ArgoComponent = "Argo Project"
)

// ArgoWorkload is one workload recognised as part of an Argo component.
type ArgoWorkload struct {
	Component ArgoComponent
	Kind      string
	Namespace string
	Name      string
	// By says how it was recognised: "label app.kubernetes.io/part-of=argocd"
	// or "image quay.io/argoproj/argocd:v3.1.0".
	By string
}

// Ref returns the workload as an object reference.
func (a ArgoWorkload) Ref() ObjectRef {
	return ObjectRef{Kind: a.Kind, Namespace: a.Namespace, Name: a.Name}
}

// Labels set by the upstream manifests and Helm charts (argoproj/argo-cd
// manifests/install.yaml, argoproj/argo-rollouts manifests/install.yaml,
// argoproj/argo-helm charts).
const (
	labelPartOf = "app.kubernetes.io/part-of"
	labelName   = "app.kubernetes.io/name"
)

var partOfComponent = map[string]ArgoComponent{
	"argocd":         ArgoCD,
	"argo-cd":        ArgoCD,
	"argo-rollouts":  ArgoRollouts,
	"argo-events":    ArgoEvents,
	"argo-workflows": ArgoWorkflows,
}

var nameComponent = map[string]ArgoComponent{
	"argo-rollouts":             ArgoRollouts,
	"argo-rollouts-dashboard":   ArgoRollouts,
	"argo-events":               ArgoEvents,
	"argo-events-controller":    ArgoEvents,
	"argo-workflows-server":     ArgoWorkflows,
	"argo-workflows-controller": ArgoWorkflows,
	"workflow-controller":       ArgoWorkflows,
	"argo-server":               ArgoWorkflows,
}

// imageComponent maps the repository name under argoproj/ to its component.
var imageComponent = map[string]ArgoComponent{
	"argocd":                ArgoCD,
	"argo-rollouts":         ArgoRollouts,
	"kubectl-argo-rollouts": ArgoRollouts,
	"argo-events":           ArgoEvents,
	"workflow-controller":   ArgoWorkflows,
	"argocli":               ArgoWorkflows,
	"argoexec":              ArgoWorkflows,
}

// argoprojPrefixes are the registries the Argo Project publishes to
// (quay.io/argoproj, mirrored on Docker Hub as argoproj/...).
var argoprojPrefixes = []string{"quay.io/argoproj/", "docker.io/argoproj/", "index.docker.io/argoproj/", "argoproj/"}

// ClassifyArgoComponents returns the workloads of lists that belong to an
// Argo Project component, in input order. A workload is recognised by the
// upstream labels on it or on its pod template (app.kubernetes.io/part-of
// argocd|argo-rollouts|argo-events|argo-workflows, app.kubernetes.io/name
// argo-rollouts or argocd-*) or by a container image from argoproj
// (quay.io/argoproj/argocd, argo-rollouts, argo-events, workflow-controller,
// argocli, ...; any other argoproj image is reported as "Argo Project").
//
// It is a pure function and allocates only for matches, so that it stays
// cheap over tens of thousands of workloads.
func ClassifyArgoComponents(lists ...[]cluster.Workload) []ArgoWorkload {
	var out []ArgoWorkload
	for _, ws := range lists {
		for i := range ws {
			w := &ws[i]
			if c, by, ok := argoComponentOf(w); ok {
				out = append(out, ArgoWorkload{Component: c, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name, By: by})
			}
		}
	}
	return out
}

func argoComponentOf(w *cluster.Workload) (ArgoComponent, string, bool) {
	for _, labels := range [2]map[string]string{w.Labels, w.PodLabels} {
		if v, ok := labels[labelPartOf]; ok {
			if c, ok := partOfComponent[v]; ok {
				return c, labelPartOf + "=" + v, true
			}
		}
		if v, ok := labels[labelName]; ok {
			if c, ok := nameComponent[v]; ok {
				return c, labelName + "=" + v, true
			}
			if strings.HasPrefix(v, "argocd-") {
				return ArgoCD, labelName + "=" + v, true
			}
		}
	}
	for _, ct := range w.Containers {
		if repo, ok := argoprojRepo(ct.Image); ok {
			c, known := imageComponent[repo]
			if !known {
				c = ArgoProject
			}
			return c, "image " + ct.Image, true
		}
	}
	return "", "", false
}

// argoprojRepo returns the repository name under argoproj/ of image
// ("quay.io/argoproj/argocd:v3.1@sha256:..." → "argocd") without allocating.
func argoprojRepo(image string) (string, bool) {
	for _, p := range argoprojPrefixes {
		if rest, ok := strings.CutPrefix(image, p); ok {
			if i := strings.IndexAny(rest, ":@"); i >= 0 {
				rest = rest[:i]
			}
			return rest, rest != ""
		}
	}
	return "", false
}

// ArgoComponents fails when Argo CD, Argo Rollouts, Argo Events or Argo
// Workflows controllers (or any other argoproj workload) run anywhere in the
// cluster: a clean-cluster install brings its own (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/, "Installation options for GitOps Runtimes" and
// "Argo Project components"). With --existing-argocd, Argo CD in the runtime
// namespace is the expected one and is not reported. Before `helm upgrade`
// (--upgrade) the workloads of the release being upgraded (Helm ownership
// annotations naming it, apply.OwnedBy) are its own, not a conflict, and
// another installation conflicts only when it is of a component the
// upgrade's target runs too (an Argo Rollouts installed on its own, as
// upgrade-deletes advises when the target drops the runtime's, is not).
func ArgoComponents() Check {
	return Check{
		Meta: Meta{
			ID:         "argo-components",
			Impact:     ImpactRuntimeBreaks,
			Category:   CategoryConflicts,
			ReadsChart: true,
			Modes:      ModePre | ModeUpgrade,
			Title:      "No Argo CD, Argo Rollouts, Argo Events or Argo Workflows in the cluster",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runArgoComponents,
	}
}

func runArgoComponents(ctx context.Context, env *Env) (Result, error) {
	deps, err := env.Cluster.Deployments()
	if err != nil {
		return Result{}, err
	}
	sts, err := env.Cluster.StatefulSets()
	if err != nil {
		return Result{}, err
	}
	found := ClassifyArgoComponents(deps, sts)
	own := 0
	var beside []ArgoWorkload // components the upgrade's target does not run
	if env.Upgrading() {
		owned := apply.OwnedWorkloads(env.Inputs.ReleaseName, env.Inputs.Namespace, deps, sts)
		target, known, err := upgradeTargetWorkloads(ctx, env)
		if err != nil {
			return Result{}, err
		}
		runs := map[ArgoComponent]bool{}
		for _, a := range ClassifyArgoComponents(target) {
			runs[a.Component] = true
		}
		kept := found[:0:0]
		for _, a := range found {
			switch {
			case owned[a.Kind+"/"+a.Namespace+"/"+a.Name]:
				own++
			case known && !runs[a.Component]:
				beside = append(beside, a)
			default:
				kept = append(kept, a)
			}
		}
		found = kept
	}
	expected := 0
	if env.Inputs.ExistingArgoCD {
		kept := found[:0:0]
		for _, a := range found {
			if a.Component == ArgoCD && a.Namespace == env.Inputs.Namespace {
				expected++
				continue
			}
			kept = append(kept, a)
		}
		found = kept
	}
	if len(found) == 0 {
		var besides []string
		if own > 0 {
			besides = append(besides, fmt.Sprintf("those of release %s being upgraded (%d workloads)", env.Inputs.ReleaseName, own))
		}
		if expected > 0 {
			besides = append(besides, fmt.Sprintf("the existing Argo CD in namespace %s (%d workloads)", env.Inputs.Namespace, expected))
		}
		if len(beside) > 0 {
			besides = append(besides, describeArgoWorkloads(beside)+", which the upgraded runtime does not run")
		}
		if len(besides) > 0 {
			return Pass("no Argo Project components besides %s", strings.Join(besides, " and ")), nil
		}
		return Pass("no Argo Project components in %d Deployments and %d StatefulSets", len(deps), len(sts)), nil
	}
	refs := make([]ObjectRef, len(found))
	for i, a := range found {
		refs[i] = a.Ref()
	}
	return Fail("found %d Argo Project workload(s): %s", len(found), describeArgoWorkloads(found)).
		WithHint(argoComponentsHint(found, env.Inputs, env.Upgrading())).
		WithObjects(refs...), nil
}

// describeArgoWorkloads groups workloads by component and namespace:
// "Argo CD in argocd (Deployment/argocd-server, StatefulSet/...); Argo Rollouts in ...".
func describeArgoWorkloads(found []ArgoWorkload) string {
	type key struct {
		c  ArgoComponent
		ns string
	}
	var order []key
	groups := map[key][]string{}
	for _, a := range found {
		k := key{a.Component, a.Namespace}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], a.Kind+"/"+a.Name)
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		names := groups[k]
		if len(names) > 8 {
			names = append(names[:8:8], fmt.Sprintf("and %d more", len(names)-8))
		}
		parts = append(parts, fmt.Sprintf("%s in %s (%s)", k.c, k.ns, strings.Join(names, ", ")))
	}
	return strings.Join(parts, "; ")
}

func argoComponentsHint(found []ArgoWorkload, in Inputs, upgrading bool) string {
	hasCD := false
	for _, a := range found {
		if a.Component == ArgoCD {
			hasCD = true
		}
	}
	h := ""
	if upgrading {
		h = fmt.Sprintf("these workloads do not belong to release %s in namespace %s (no Helm ownership annotations naming it); ", in.ReleaseName, in.Namespace)
	}
	h += "a clean-cluster install brings its own Argo components: uninstall these controllers the way they were installed " +
		"(helm uninstall, or kubectl delete -f <install.yaml>), keeping their CRDs and custom resources; " +
		"adopt the CRDs with --fix (see argo-crds-ownership)"
	if hasCD && !in.ExistingArgoCD {
		h += "\nor keep an existing Argo CD: install the runtime alongside it, in Argo CD's namespace, with --existing-argocd (argo-cd.enabled=false)"
	}
	if hasCD && in.ExistingArgoCD {
		h += fmt.Sprintf("\nwith --existing-argocd the runtime uses the Argo CD in its own namespace (%s); Argo CD elsewhere is not used and conflicts", in.Namespace)
	}
	return h
}
