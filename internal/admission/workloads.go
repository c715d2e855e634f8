package admission

import "github.com/gitops-preflight/kubectl-gitops-preflight/internal/schedule"

// InstallWorkloads are the workloads whose pods helm install starts: every
// workload of target (its Deployments, StatefulSets and Jobs, hooks
// included: NewPlan keeps the hook Jobs that run), each with its replicas,
// in releaseNS when its manifest names no namespace.
func InstallWorkloads(target []schedule.PodSpec, releaseNS string) []Workload {
	out := make([]Workload, 0, len(target))
	for _, s := range target {
		out = append(out, workloadOf(s, s.Replicas, releaseNS))
	}
	return out
}

// UpgradeWorkloads are the workloads whose pods helm upgrade starts, sorted
// against current (the workloads of the revision it upgrades from) by
// schedule.PlanUpgrade: the pre-upgrade hook Jobs, then the workloads it
// places after the rollout, a changed Deployment counted by its rollout's
// surge beside its old pods (which are already counted); and how many pods
// of unchanged workloads it keeps running.
func UpgradeWorkloads(target, current []schedule.PodSpec, releaseNS string) ([]Workload, int) {
	up := schedule.PlanUpgrade(target, current, releaseNS)
	surge := map[string]int{}
	for _, s := range up.Surge {
		surge[schedule.WorkloadKey(s.Kind, s.Namespace, s.Name, releaseNS)] = s.Replicas
	}
	out := make([]Workload, 0, len(up.PreHooks)+len(up.After))
	for _, s := range up.PreHooks {
		out = append(out, workloadOf(s, s.Replicas, releaseNS))
	}
	for _, s := range up.After {
		n := s.Replicas
		key := schedule.WorkloadKey(s.Kind, s.Namespace, s.Name, releaseNS)
		if m, ok := surge[key]; ok && s.Hook == "" && up.Freed[key] {
			// A changed Deployment rolls: at most its surge runs beside the
			// old pods.
			n = m
		}
		out = append(out, workloadOf(s, n, releaseNS))
	}
	return out, up.Kept
}

// workloadOf is s with pods pods at its peak, in releaseNS when its
// manifest names no namespace.
func workloadOf(s schedule.PodSpec, pods int, releaseNS string) Workload {
	ns := s.Namespace
	if ns == "" {
		ns = releaseNS
	}
	return Workload{Kind: s.Kind, Name: s.Name, Namespace: ns, Template: s.Template, Pods: pods}
}
