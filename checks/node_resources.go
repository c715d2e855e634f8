package checks

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/cluster"
)

// Node minimums: "Memory: 5000 MB, CPU: 2" (https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/,
// "Minimum system requirements"; https://codefresh.io/csdp-docs/docs/runtime/requirements/, "Minimum
// requirements"). 5000 MB is read as 5000M = 5,000,000,000 bytes.
const (
	MinNodeMilliCPU    int64 = 2000
	MinNodeMemoryBytes int64 = 5_000_000_000
)

// NodeResources passes when at least one Ready, schedulable node (not
// cordoned, no NoSchedule/NoExecute taint) has allocatable cpu ≥ 2 and
// memory ≥ 5000M.
func NodeResources() Check {
	return Check{
		Meta: Meta{
			ID:       "node-resources",
			Impact:   ImpactRuntimeBreaks,
			Category: CategoryCluster,
			Modes:    ModePre | ModeUpgrade,
			Title:    "A Ready, schedulable node has at least 2 CPU and 5000M memory allocatable",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
		},
		Run: runNodeResources,
	}
}

// NodeVerdict is the evaluation of a cluster's nodes against the minimums.
type NodeVerdict struct {
	Total, Eligible, Qualifying int
	NotReady, Cordoned, Tainted int
	// Best is the schedulable node closest to (or furthest over) the minimums;
	// Found is false when no node is schedulable.
	Best  cluster.Node
	Found bool
}

// EvaluateNodes checks nodes against the minimums in one pass with constant
// memory. The best node maximises the smaller of its cpu and memory ratios to
// the minimums.
func EvaluateNodes(nodes []cluster.Node) NodeVerdict {
	var v NodeVerdict
	bestScore := -1.0
	for _, n := range nodes {
		v.Total++
		switch {
		case !n.Ready:
			v.NotReady++
			continue
		case n.Unschedulable:
			v.Cordoned++
			continue
		case len(n.Taints) > 0:
			v.Tainted++
			continue
		}
		v.Eligible++
		if n.AllocatableMilliCPU >= MinNodeMilliCPU && n.AllocatableMemoryBytes >= MinNodeMemoryBytes {
			v.Qualifying++
		}
		score := min(float64(n.AllocatableMilliCPU)/float64(MinNodeMilliCPU),
			float64(n.AllocatableMemoryBytes)/float64(MinNodeMemoryBytes))
		if score > bestScore {
			bestScore, v.Best, v.Found = score, n, true
		}
	}
	return v
}

func runNodeResources(_ context.Context, env *Env) (Result, error) {
	nodes, err := env.Cluster.Nodes()
	if err != nil {
		return Result{}, err
	}
	v := EvaluateNodes(nodes)
	excluded := excludedNodes(v)
	if v.Qualifying > 0 {
		return Pass("%d of %d nodes qualify; largest: %s with %s", v.Qualifying, v.Total, v.Best.Name, nodeFigures(v.Best)), nil
	}
	need := fmt.Sprintf("needs cpu ≥ %s and memory ≥ %s", FormatMilliCPU(MinNodeMilliCPU), FormatBytes(MinNodeMemoryBytes))
	hint := "add a node (or a node pool) with at least 2 CPU and 5000M allocatable memory, or uncordon/untaint an existing one (kubectl uncordon NODE)"
	if !v.Found {
		msg := "no Ready, schedulable node"
		if v.Total == 0 {
			msg = "the cluster has no nodes"
		} else {
			msg += fmt.Sprintf(" among %d nodes%s", v.Total, excluded)
		}
		return Fail("%s; the runtime %s", msg, need).WithHint(hint), nil
	}
	return Fail("no node qualifies (%d Ready, schedulable of %d%s); best: %s with %s; %s",
		v.Eligible, v.Total, excluded, v.Best.Name, nodeFigures(v.Best), need).
		WithHint(hint).
		WithObjects(ObjectRef{Kind: "Node", Name: v.Best.Name}), nil
}

func excludedNodes(v NodeVerdict) string {
	s := ""
	for _, p := range []struct {
		n    int
		what string
	}{{v.NotReady, "not Ready"}, {v.Cordoned, "cordoned"}, {v.Tainted, "NoSchedule-tainted"}} {
		if p.n > 0 {
			s += fmt.Sprintf(", %d %s", p.n, p.what)
		}
	}
	return s
}

func nodeFigures(n cluster.Node) string {
	return fmt.Sprintf("allocatable cpu %s, memory %s", FormatMilliCPU(n.AllocatableMilliCPU), FormatBytes(n.AllocatableMemoryBytes))
}

// FormatMilliCPU renders millicores as Kubernetes does: "2", "1500m".
func FormatMilliCPU(m int64) string {
	return resource.NewMilliQuantity(m, resource.DecimalSI).String()
}

// FormatBytes renders bytes in decimal megabytes, the unit of the documented
// minimum, with gibibytes beside it: 4294967296 → "4295M (4.0Gi)".
func FormatBytes(b int64) string {
	return fmt.Sprintf("%dM (%.1fGi)", (b+500_000)/1_000_000, float64(b)/(1<<30))
}
