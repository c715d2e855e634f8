package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mapolicy"
)

// What admission changed of the release's pods, and which
// MutatingAdmissionPolicies could have: the pod each workload's dry run
// sent is compared with the pod the API server answered (a short list of
// what changed: containers added, resources set or changed, labels and
// annotations added, images and securityContexts changed), and the
// MutatingAdmissionPolicies (through their bindings) that match that pod
// are named as the candidates, matched by the API server's own code
// (internal/mapolicy over k8s.io/apiserver).

// PodMutation is what admission changed of one workload's pod.
type PodMutation struct {
	// Changes are the changes, in a few words each ("added container
	// sleeper", "limits.memory of manager 256Mi → 1Gi").
	Changes []string
	// Resources is true when a container's requests or limits changed,
	// or a container was added: what a quota counts changed.
	Resources bool
	// Policies are the policy and binding pairs that match the pod.
	Policies []mapolicy.Match
	// LimitRanger is true when the LimitRanger plugin says it set
	// resources (annotation kubernetes.io/limit-ranger).
	LimitRanger bool
}

// Mutations are the pods' mutations, in plan order.
type Mutations struct {
	Pods []PodMutation
	// Unevaluated are the policy and binding pairs (mapolicy.Match.String)
	// taken to match without being decided, with why.
	Unevaluated map[string]string
}

// limitRangerAnnotation is what the LimitRanger admission plugin writes on
// a pod it set defaults on (limitRangerAnnotation:
// https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/admission/limitranger/admission.go).
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// MutationInput is what Mutations matches the policies with.
type MutationInput struct {
	// Matcher holds the cluster's MutatingAdmissionPolicies and bindings
	// (nil: none is matched).
	Matcher *mapolicy.Matcher
	// User and Groups are who sends the pods' dry runs ("" unknown).
	User   string
	Groups []string
	// NamespaceLabels returns the labels of a namespace other than the
	// release's (ok false: unknown, the release namespace's are used).
	NamespaceLabels func(ns string) (labels map[string]string, ok bool)
}

// PodMutations compares each pod sent with the pod the API server answered
// (PodChanges), and matches the policies of in with it.
func PodMutations(ctx context.Context, p *Plan, runs *PodRuns, in MutationInput) (*Mutations, error) {
	out := &Mutations{Pods: make([]PodMutation, len(p.Workloads)), Unevaluated: map[string]string{}}
	match := in.Matcher != nil && in.Matcher.Pairs() > 0
	for i, w := range p.Workloads {
		m := &out.Pods[i]
		if v := runs.Verdicts[i]; v.Object != nil && v.Refused == nil {
			got := runs.Answered(i)
			m.Changes, m.Resources = PodChanges(runs.Pods[i], got)
			_, had := runs.Pods[i].Annotations[limitRangerAnnotation]
			_, has := got.Annotations[limitRangerAnnotation]
			m.LimitRanger = has && !had
		}
		if !match {
			continue
		}
		nsLabels := namespaceLabelsOf(p, w.Namespace, in)
		pod := runs.Pods[i]
		var err error
		m.Policies, err = in.Matcher.Match(ctx, mapolicy.Request{Object: pod, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
			Resource: podsGVR, Namespace: w.Namespace, Name: pod.Name, NamespaceLabels: nsLabels, User: in.User, Groups: in.Groups})
		if err != nil {
			return nil, err
		}
		for _, pm := range m.Policies {
			if pm.Unevaluated != "" {
				out.Unevaluated[pm.String()] = pm.Unevaluated
			}
		}
	}
	return out, nil
}

// ObjectMutation is what admission changed of one of the release's
// objects other than pods: its labels and annotations (the rest of an
// object the API server answers holds its defaults, which change nothing
// the chart set), and the MutatingAdmissionPolicies that match its create.
type ObjectMutation struct {
	// Changes are "labels team added", "annotations a changed" (keys only:
	// a value may be a secret's).
	Changes []string
	// Policies are the policy and binding pairs that match the object.
	Policies []mapolicy.Match
}

// ObjectMutations compares, for each object of p a dry run judged and the
// API server admitted, the object sent with the object answered
// (MetadataChanges), and matches the policies of in with its create. It
// is indexed like p.Objects; the map holds the pairs taken to match
// without being decided (mapolicy.Match.String), with why.
func ObjectMutations(ctx context.Context, p *Plan, runs *ObjectRuns, in MutationInput) ([]ObjectMutation, map[string]string, error) {
	out := make([]ObjectMutation, len(p.Objects))
	unevaluated := map[string]string{}
	match := in.Matcher != nil && in.Matcher.Pairs() > 0
	for i, o := range p.Objects {
		v := runs.Verdicts[i]
		if !v.Passed() || v.Object == nil {
			continue
		}
		m := &out[i]
		m.Changes = MetadataChanges(o.U.GetLabels(), v.Object.GetLabels(), o.U.GetAnnotations(), v.Object.GetAnnotations())
		if !match || len(m.Changes) == 0 {
			continue
		}
		var err error
		m.Policies, err = in.Matcher.Match(ctx, mapolicy.Request{Object: o.U, Kind: o.U.GroupVersionKind(), Resource: o.Resource,
			Namespace: o.RequestNamespace(), Name: o.U.GetName(), NamespaceLabels: namespaceLabelsOf(p, o.RequestNamespace(), in), User: in.User, Groups: in.Groups})
		if err != nil {
			return nil, nil, err
		}
		for _, pm := range m.Policies {
			if pm.Unevaluated != "" {
				unevaluated[pm.String()] = pm.Unevaluated
			}
		}
	}
	return out, unevaluated, nil
}

// namespaceLabelsOf are the labels of namespace ns as a policy matches
// them: the release namespace's (those it will get when it does not exist
// yet), else what in says of ns.
func namespaceLabelsOf(p *Plan, ns string, in MutationInput) map[string]string {
	if ns != "" && ns != p.Namespace && in.NamespaceLabels != nil {
		if l, ok := in.NamespaceLabels(ns); ok {
			return l
		}
	}
	return p.NamespaceLabels
}

// MetadataChanges lists the labels and annotations added, changed or
// removed between those sent and those answered: "labels team added",
// "annotations a changed, b removed".
func MetadataChanges(sentLabels, gotLabels, sentAnnotations, gotAnnotations map[string]string) []string {
	var changes []string
	if keys := changedKeys(sentLabels, gotLabels); len(keys) > 0 {
		changes = append(changes, "labels "+strings.Join(keys, ", "))
	}
	if keys := changedKeys(sentAnnotations, gotAnnotations); len(keys) > 0 {
		changes = append(changes, "annotations "+strings.Join(keys, ", "))
	}
	return changes
}

// PodChanges lists what admission changed between the pod sent and the pod
// the API server answered. Defaulting is not a change: a container's
// request defaulted from its limit, an empty pod securityContext.
func PodChanges(sent, got *corev1.Pod) (changes []string, resources bool) {
	sentC := map[string]corev1.Container{}
	for _, c := range sent.Spec.Containers {
		sentC[c.Name] = c
	}
	sentInit := map[string]bool{}
	for _, c := range sent.Spec.InitContainers {
		sentInit[c.Name] = true
	}
	for _, c := range got.Spec.InitContainers {
		if sentInit[c.Name] {
			continue
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			changes = append(changes, "added native sidecar "+c.Name)
		} else {
			changes = append(changes, "added init container "+c.Name)
		}
		resources = true
	}
	for _, c := range got.Spec.Containers {
		s, ok := sentC[c.Name]
		if !ok {
			changes = append(changes, "added container "+c.Name+resourceSummary(c.Resources))
			resources = true
			continue
		}
		if rc := resourceChanges(s, c); len(rc) > 0 {
			changes = append(changes, strings.Join(rc, ", ")+" of "+c.Name)
			resources = true
		}
		if s.Image != c.Image {
			changes = append(changes, fmt.Sprintf("image of %s %s → %s", c.Name, s.Image, c.Image))
		}
		if f := changedFields(s.SecurityContext, c.SecurityContext); len(f) > 0 {
			changes = append(changes, fmt.Sprintf("securityContext of %s (%s)", c.Name, strings.Join(f, ", ")))
		}
	}
	sentSC, gotSC := sent.Spec.SecurityContext, got.Spec.SecurityContext
	if sentSC == nil {
		sentSC = &corev1.PodSecurityContext{}
	}
	if gotSC == nil {
		gotSC = &corev1.PodSecurityContext{}
	}
	if f := changedFields(sentSC, gotSC); len(f) > 0 {
		changes = append(changes, fmt.Sprintf("pod securityContext (%s)", strings.Join(f, ", ")))
	}
	changes = append(changes, MetadataChanges(sent.Labels, got.Labels, sent.Annotations, got.Annotations)...)
	return changes, resources
}

// resourceChanges are the requests and limits of a container that differ
// ("limits.memory 256Mi → 1Gi", "requests.cpu set to 100m"), leaving out a
// request the API server defaults from the container's limit.
func resourceChanges(sent, got corev1.Container) []string {
	var out []string
	diff := func(kind string, s, g corev1.ResourceList, defaulted corev1.ResourceList) {
		names := map[corev1.ResourceName]bool{}
		for n := range s {
			names[n] = true
		}
		for n := range g {
			names[n] = true
		}
		for _, n := range sortedResources(resourceListOf(names)) {
			sv, sok := s[n]
			gv, gok := g[n]
			switch {
			case sok && gok && sv.Cmp(gv) == 0:
			case !sok && gok:
				if d, ok := defaulted[n]; ok && d.Cmp(gv) == 0 {
					continue
				}
				out = append(out, fmt.Sprintf("%s.%s set to %s", kind, n, gv.String()))
			case sok && !gok:
				out = append(out, fmt.Sprintf("%s.%s removed", kind, n))
			default:
				out = append(out, fmt.Sprintf("%s.%s %s → %s", kind, n, sv.String(), gv.String()))
			}
		}
	}
	diff("requests", sent.Resources.Requests, got.Resources.Requests, sent.Resources.Limits)
	diff("limits", sent.Resources.Limits, got.Resources.Limits, nil)
	return out
}

func resourceListOf(names map[corev1.ResourceName]bool) corev1.ResourceList {
	l := corev1.ResourceList{}
	for n := range names {
		l[n] = resource.Quantity{}
	}
	return l
}

// resourceSummary is " (requests cpu 10m, limits memory 1Gi)" for an added
// container, "" when it has none.
func resourceSummary(r corev1.ResourceRequirements) string {
	var parts []string
	for _, n := range sortedResources(r.Requests) {
		v := r.Requests[n]
		parts = append(parts, "requests."+string(n)+" "+v.String())
	}
	for _, n := range sortedResources(r.Limits) {
		v := r.Limits[n]
		parts = append(parts, "limits."+string(n)+" "+v.String())
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// changedFields names the top-level fields of two securityContexts that
// differ (nil and empty are the same).
func changedFields(sent, got any) []string {
	if apiequality.Semantic.DeepEqual(sent, got) {
		return nil
	}
	a, b := fieldsOf(sent), fieldsOf(got)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if string(a[k]) != string(b[k]) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func fieldsOf(v any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	data, err := json.Marshal(v)
	if err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}

// changedKeys are the keys of got added or changed from sent ("team=a
// added" for labels is too long for annotations: keys only, each marked).
func changedKeys(sent, got map[string]string) []string {
	var out []string
	for k, v := range got {
		old, ok := sent[k]
		switch {
		case !ok:
			out = append(out, k+" added")
		case old != v:
			out = append(out, k+" changed")
		}
	}
	for k := range sent {
		if _, ok := got[k]; !ok {
			out = append(out, k+" removed")
		}
	}
	sort.Strings(out)
	return out
}
