package checks

// InClusterChecks adapts selected for a run from a pod of the cluster
// (--in-cluster: the gate Job of deploy/gate), and returns the checks it
// leaves out, each with why:
//   - helm-version is left out: it judges the workstation's Helm client,
//     and in the gate Helm is the one running the hook;
//   - cluster-admin is left out unless the installer is named
//     (installer): the pod's ServiceAccount is not the identity that
//     installs;
//   - platform-reachable probes from the pod network, which is what the
//     runtime's pods (and the chart's validate-values hook, which calls
//     the platform) will have: a failure there is a fail whose impact is
//     install-fails, not the workstation's advisory warn.
//
// The checks that read the chart stay: with no --chart they skip, saying
// no chart was given.
func InClusterChecks(selected []Check, installer bool) (kept []Check, left map[string]string) {
	left = map[string]string{}
	for _, c := range selected {
		switch c.ID {
		case "helm-version":
			left[c.ID] = "judges the workstation's Helm client; in the cluster Helm is the one running the gate"
			continue
		case "cluster-admin":
			if !installer {
				left[c.ID] = "judges the runner's identity, the gate's ServiceAccount, not the installer's: name the installer with --installer"
				continue
			}
		case "platform-reachable":
			c.Severity, c.Impact = SeverityFail, ImpactInstallFails
		}
		kept = append(kept, c)
	}
	return kept, left
}
