package checks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mapolicy"
)

// What admission changed of the release's pods, and which
// MutatingAdmissionPolicies could have: the pod each workload's dry run
// sent is compared with the pod the API server answered (a short list of
// what changed: containers added, resources set or changed, labels and
// annotations added, images and securityContexts changed), and the
// MutatingAdmissionPolicies (through their bindings) that match that pod
// are named as the candidates, matched by the API server's own code
// (internal/mapolicy over k8s.io/apiserver). admission-pods, resource-quota
// and the hook-completion rule say it (docs/admission.md).

// podMutation is what admission changed of one workload's pod.
type podMutation struct {
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

// mutationRuns are the pods' mutations, in plan order, and what the run
// could not read.
type mutationRuns struct {
	pods []podMutation
	// note says why the MutatingAdmissionPolicies were not read, or
	// which could not be decided ("" when all were).
	note string
}

// limitRangerAnnotation is what the LimitRanger admission plugin writes on
// a pod it set defaults on (plugin/pkg/admission/limitranger/admission.go,
// limitRangerAnnotation).
const limitRangerAnnotation = "kubernetes.io/limit-ranger"

// podMutations reads the mutations of the plan's pods once per run.
func podMutations(ctx context.Context, env *Env, p *admissionPlan, runs *podRuns) (*mutationRuns, error) {
	return cluster.Memo(env.Cluster, "admission/mutations", func() (*mutationRuns, error) {
		out := &mutationRuns{pods: make([]podMutation, len(p.Workloads))}
		matcher, note, err := policyMatcher(env)
		if err != nil {
			return nil, err
		}
		out.note = note
		var who struct {
			user   string
			groups []string
		}
		if matcher != nil && matcher.Pairs() > 0 {
			if e, err := dryRunEngine(ctx, env); err == nil {
				id := e.Identity(ctx)
				who.user, who.groups = id.User, id.Groups
			}
		}
		unevaluated := map[string]string{}
		for i, w := range p.Workloads {
			m := &out.pods[i]
			if v := runs.verdicts[i]; v.Object != nil && v.Refused == nil {
				got := answeredPod(runs, i)
				m.Changes, m.Resources = podChanges(runs.pods[i], got)
				_, had := runs.pods[i].Annotations[limitRangerAnnotation]
				_, has := got.Annotations[limitRangerAnnotation]
				m.LimitRanger = has && !had
			}
			if matcher == nil || matcher.Pairs() == 0 {
				continue
			}
			nsLabels := p.NamespaceLabels
			if w.Namespace != p.Namespace {
				if ns, err := env.Cluster.Namespace(w.Namespace); err == nil {
					nsLabels = ns.Labels
				}
			}
			pod := runs.pods[i]
			m.Policies, err = matcher.Match(ctx, mapolicy.Request{Object: pod, Kind: corev1.SchemeGroupVersion.WithKind("Pod"),
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: w.Namespace, Name: pod.Name,
				NamespaceLabels: nsLabels, User: who.user, Groups: who.groups})
			if err != nil {
				return nil, err
			}
			for _, pm := range m.Policies {
				if pm.Unevaluated != "" {
					unevaluated[pm.String()] = pm.Unevaluated
				}
			}
		}
		if len(unevaluated) > 0 {
			var lines []string
			for k, v := range unevaluated {
				lines = append(lines, k+": "+v)
			}
			sort.Strings(lines)
			out.note = "taken to match, not decided here: " + strings.Join(first(lines, 3), "; ")
		}
		return out, nil
	})
}

// policyMatcher builds the matcher of the cluster's MutatingAdmissionPolicies.
// nil with a note: the API is not served, or may not be listed.
func policyMatcher(env *Env) (*mapolicy.Matcher, string, error) {
	mp, err := env.Cluster.MutatingAdmissionPolicies()
	var le *cluster.ListError
	switch {
	case err != nil && cluster.IsForbidden(err) && asListError(err, &le):
		return nil, "MutatingAdmissionPolicies not read (" + le.Reason() + "): a policy that changes the pods cannot be named", nil
	case err != nil:
		return nil, "", err
	case !mp.Served:
		return nil, "", nil
	}
	api, err := env.Cluster.APIResources()
	if err != nil {
		return nil, "", err
	}
	return mapolicy.New(mp.Policies, mp.Bindings, api.Resources), "", nil
}

func asListError(err error, le **cluster.ListError) bool {
	return errors.As(err, le)
}

// podChanges lists what admission changed between the pod sent and the pod
// the API server answered. Defaulting is not a change: a container's
// request defaulted from its limit, an empty pod securityContext.
func podChanges(sent, got *corev1.Pod) (changes []string, resources bool) {
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
	if keys := changedKeys(sent.Labels, got.Labels); len(keys) > 0 {
		changes = append(changes, "labels "+strings.Join(keys, ", "))
	}
	if keys := changedKeys(sent.Annotations, got.Annotations); len(keys) > 0 {
		changes = append(changes, "annotations "+strings.Join(keys, ", "))
	}
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

// mutators names who may have changed a pod: the MutatingAdmissionPolicies
// that match it, the mutating webhooks that match its create (hooks, as
// mutatingWebhooksFor names them), LimitRanger when it says it set
// resources. "" when none is known. matches is "matches" or "match", by
// how many they are.
func (m podMutation) mutators(hooks, ns string) (who, matches string) {
	var names []string
	n := len(m.Policies)
	if n > 0 {
		names = append(names, mapolicy.Describe(m.Policies))
	}
	if strings.HasPrefix(hooks, "mutating webhook ") {
		names = append(names, hooks)
		n += 1 + strings.Count(hooks, ", ")
	}
	if m.LimitRanger {
		names = append(names, "LimitRanger (a LimitRange of namespace "+ns+")")
		n++
	}
	matches = "matches"
	if n > 1 {
		matches = "match"
	}
	return strings.Join(names, "; "), matches
}

// line is one pod's mutation in one line: "MutatingAdmissionPolicy x
// (binding y) matches this pod; admission: added container sleeper".
func (m podMutation) line(hooks, ns string) string {
	s := "admission: " + strings.Join(first(m.Changes, 4), ", ")
	if who, matches := m.mutators(hooks, ns); who != "" {
		return who + " " + matches + " this pod; " + s
	}
	return s
}
