// Package schedule places the pods a release will run on the nodes of a
// cluster as the scheduler's filters would: which pods a rendered manifest
// runs (WorkloadsOf, InstallPods), whether they fit beside the pods
// already bound (Fit: nodeSelector, required node affinity, taints and
// tolerations, NodeResourcesFit's requests), the platforms of the nodes a
// pod can land on (NodePlatforms), and, before `helm upgrade`, when each
// of the target's pods needs room and what the rollout frees
// (PlanUpgrade, SimulateRollouts, FreeOwnPods). It reads plain inputs
// (chart objects, cluster.Node and cluster.BoundPod summaries).
package schedule
