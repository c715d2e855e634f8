package checks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/fixtures"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// TestChartWorkloadValues holds the table of the chart's values the hints
// name (plan.ChartWorkloadValues) against the real chart 0.30.0: rendered
// with every path set to a value of its own, each workload carries it; with
// every removal value set, each such workload is gone.
func TestChartWorkloadValues(t *testing.T) {
	dir, err := fixtures.Dir("gitops-runtime/chart/gitops-runtime")
	if err != nil {
		t.Fatal(err)
	}
	ref := dir + "/gitops-runtime/chart/gitops-runtime"
	base := func() map[string]any {
		return map[string]any{"global": map[string]any{"codefresh": map[string]any{"accountId": "a", "userToken": map[string]any{"token": "x"}},
			"runtime": map[string]any{"name": "rt"}}}
	}
	set := func(v map[string]any, path string, val any) {
		keys := strings.Split(path, ".")
		m := v
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = val
	}
	render := func(v map[string]any) map[string]RuntimePodSpec {
		t.Helper()
		k := newKit(t).withChart(ref).with(Inputs{Values: v, RenderValues: v})
		env := k.env()
		r, err := env.Rendering(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ws, err := renderedWorkloads(env, r)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]RuntimePodSpec{}
		for _, w := range ws {
			out[w.Name] = w
		}
		return out
	}
	v := base()
	removals := base()
	for i, name := range plan.ChartWorkloadNames() {
		wv, _ := plan.ChartWorkloadValues(name)
		uid := int64(4000 + i)
		if wv.Resources != "" {
			set(v, wv.Resources, map[string]any{"limits": map[string]any{"cpu": fmt.Sprintf("%dm", 100+i)}})
		}
		if wv.PodSecurityContext != "" {
			set(v, wv.PodSecurityContext, map[string]any{"runAsUser": uid})
		}
		if wv.ContainerSecurityContext != "" {
			set(v, wv.ContainerSecurityContext, map[string]any{"runAsGroup": uid})
		}
		if wv.Remove != "" {
			k, val, _ := strings.Cut(wv.Remove, "=")
			set(removals, k, val == "true")
		}
	}
	got := render(v)
	for i, name := range plan.ChartWorkloadNames() {
		wv, _ := plan.ChartWorkloadValues(name)
		w, ok := got[name]
		if !ok {
			t.Errorf("%s: the chart renders no such workload", name)
			continue
		}
		uid := int64(4000 + i)
		if wv.Resources != "" && w.Spec.Containers[0].Resources.Limits.Cpu().MilliValue() != int64(100+i) {
			t.Errorf("%s: %s does not set its resources: %v", name, wv.Resources, w.Spec.Containers[0].Resources)
		}
		if wv.PodSecurityContext != "" && (w.Spec.SecurityContext == nil || w.Spec.SecurityContext.RunAsUser == nil || *w.Spec.SecurityContext.RunAsUser != uid) {
			t.Errorf("%s: %s does not set its pod securityContext", name, wv.PodSecurityContext)
		}
		if wv.ContainerSecurityContext != "" {
			c := w.Spec.Containers[0].SecurityContext
			if c == nil || c.RunAsGroup == nil || *c.RunAsGroup != uid {
				t.Errorf("%s: %s does not set its container securityContext", name, wv.ContainerSecurityContext)
			}
		}
	}
	gone := render(removals)
	for _, name := range plan.ChartWorkloadNames() {
		if wv, _ := plan.ChartWorkloadValues(name); wv.Remove != "" {
			if _, ok := gone[name]; ok {
				t.Errorf("%s: --set %s does not remove it", name, wv.Remove)
			}
		}
	}
}
