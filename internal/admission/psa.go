package admission

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// PodSecurity evaluated here, with the code the API server's PodSecurity
// admission runs (k8s.io/pod-security-admission: its default checks at the
// latest version, https://kubernetes.io/docs/concepts/security/pod-security-standards/):
// for a namespace that does not exist yet, and to name the level of the
// Pod Security Standards every planned pod meets.

var psaEvaluator = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// podSecurity evaluates pod at level (baseline or restricted, latest) and
// returns whether it is allowed and, when not, PodSecurity's own detail
// ("allowPrivilegeEscalation != false (container "x" must set ...), ...").
func podSecurity(pod *corev1.Pod, level psaapi.Level) (bool, string, error) {
	ev, err := psaEvaluator()
	if err != nil {
		return false, "", fmt.Errorf("PodSecurity evaluator: %w", err)
	}
	res := policy.AggregateCheckResults(ev.EvaluatePod(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, &pod.ObjectMeta, &pod.Spec))
	return res.Allowed, res.ForbiddenDetail(), nil
}

// StrictestLevel returns the strictest Pod Security Standard every pod
// meets: "restricted", "baseline" or "privileged".
func StrictestLevel(pods []*corev1.Pod) (string, error) {
	level := psaapi.LevelRestricted
	for _, l := range []psaapi.Level{psaapi.LevelRestricted, psaapi.LevelBaseline} {
		all := true
		for _, p := range pods {
			if p == nil {
				continue
			}
			ok, _, err := podSecurity(p, l)
			if err != nil {
				return "", err
			}
			all = all && ok
		}
		if all {
			return string(l), nil
		}
		level = psaapi.LevelPrivileged
	}
	return string(level), nil
}

// NamespacePolicy is the PodSecurity policy a namespace's labels set
// (pod-security.kubernetes.io/enforce, warn, audit; defaults privileged:
// the API server's own defaults, from its admission configuration, are
// invisible to a client).
func NamespacePolicy(labels map[string]string) psaapi.Policy {
	p, _ := psaapi.PolicyToEvaluate(labels, psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Warn:    psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
		Audit:   psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
	})
	return p
}

// EvaluateLocally judges pod against policy's enforce and warn levels as
// the API server's PodSecurity admission would: a refusal for enforce (its
// message as the API server writes it, parsed), a warning for warn.
func EvaluateLocally(pod *corev1.Pod, p psaapi.Policy) (*Refusal, []string, error) {
	ev, err := psaEvaluator()
	if err != nil {
		return nil, nil, err
	}
	enforce := policy.AggregateCheckResults(ev.EvaluatePod(p.Enforce, &pod.ObjectMeta, &pod.Spec))
	if !enforce.Allowed {
		msg := fmt.Sprintf("pods %q is forbidden: violates PodSecurity %q: %s", pod.GenerateName, p.Enforce.String(), enforce.ForbiddenDetail())
		r := ParseRefusal(msg)
		return &r, nil, nil
	}
	warn := policy.AggregateCheckResults(ev.EvaluatePod(p.Warn, &pod.ObjectMeta, &pod.Spec))
	if !warn.Allowed {
		return nil, []string{fmt.Sprintf("would violate PodSecurity %q: %s", p.Warn.String(), warn.ForbiddenDetail())}, nil
	}
	return nil, nil, nil
}
