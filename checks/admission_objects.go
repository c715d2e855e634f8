package checks

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// AdmissionObjects passes when the API server admits every object the
// install (or upgrade) creates, hooks included, each sent as a server-side
// dry-run create (dryRun=All: nothing is stored) as the identity that
// installs, and no admission plugin warns about one (docs/checks/
// admission-objects.md). In an upgrade the objects the target adds and its
// hooks are sent; the objects it changes are upgrade-apply's. A refusal is
// parsed into the layer and the policy that refused (ParseRefusal) and
// the hint names the chart value or the cluster-side exemption that fixes
// it. PodSecurity's warn and audit modes do not refuse: its warnings on a
// workload say what its enforce mode would refuse.
func AdmissionObjects() Check {
	return Check{
		Meta: Meta{
			ID:         "admission-objects",
			Impact:     ImpactInstallFails,
			ReadsChart: true,
			Category:   CategoryAdmission,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The API server admits every object the install creates (server-side dry run)",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
		},
		Run: runAdmissionObjects,
	}
}

func runAdmissionObjects(ctx context.Context, env *Env) (Result, error) {
	p, skip, err := admissionSetup(ctx, env)
	if skip != nil || err != nil {
		return derefResult(skip), err
	}
	runs, err := dryRunObjects(ctx, env, p)
	if err != nil {
		return Result{}, err
	}
	who, level, err := identityAndLevel(ctx, env, plannedPods(env, p))
	ns := p.Namespace
	if err != nil {
		return Result{}, err
	}
	var refused, rbac, notJudged []string
	var groups refusalGroups
	var refs []ObjectRef
	warned := map[string][]string{}
	sent := 0
	for i, v := range runs.verdicts {
		o := p.Objects[i]
		switch {
		case v.NotJudged != "" && o.Namespaced && !p.NamespaceExists:
			continue // namespaceNotes says so, once
		case v.NotJudged != "":
			notJudged = append(notJudged, o.label()+": "+v.NotJudged)
			continue
		case v.Refused != nil && v.Refused.Layer == LayerRBAC:
			rbac = append(rbac, v.Refused.Policy)
			continue
		}
		sent++
		if v.Refused != nil {
			refused = append(refused, fmt.Sprintf("%s: %s: %s", o.label(), v.Refused.Short(), v.Refused.Detail))
			refs = append(refs, o.ref())
			groups.add(*v.Refused, o.Obj.Name)
		}
		for _, w := range v.Warnings {
			warned[w] = append(warned[w], o.label())
		}
	}
	if v := runs.namespace; v != nil {
		sent++
		if v.Refused != nil && v.Refused.Layer == LayerRBAC {
			rbac = append(rbac, v.Refused.Policy)
		} else if v.Refused != nil {
			refused = append(refused, fmt.Sprintf("Namespace %s (helm install --create-namespace): %s: %s", ns, v.Refused.Short(), v.Refused.Detail))
			refs = append(refs, ObjectRef{Kind: "Namespace", Name: ns})
		}
		for _, w := range v.Warnings {
			warned[w] = append(warned[w], "Namespace "+ns)
		}
	}
	notes := namespaceNotes(p)
	if len(notJudged) > 0 {
		notes = append(notes, fmt.Sprintf("not judged: %s", strings.Join(first(notJudged, 4), "; ")))
	}
	what := "object the install creates"
	if env.Upgrading() {
		what = "object the upgrade creates (its hooks and the objects the target adds; the objects it changes are upgrade-apply's)"
	}
	switch {
	case len(refused) > 0:
		msg := fmt.Sprintf("the API server refuses %d of the %d %s (dry runs as %s); helm stops at the first:\n%s",
			len(refused), sent, pluralWord(sent, what), who, strings.Join(first(refused, 8), "\n"))
		return Fail("%s", withNotes(msg, notes)).WithHint(groups.hints(false, p, ns, level)).WithObjects(refs...).WithEffect(helmFails(env)), nil
	case len(rbac) > 0 && sent == 0:
		return rbacSkip(env, who, rbac), nil
	}
	if len(warned) > 0 {
		lines := warningLines(warned)
		hint := fmt.Sprintf("these warnings say what the cluster will refuse once its policy is enforced: a PodSecurity warning is what namespace %s's enforce label would refuse (see admission-pods)", ns)
		if level != "" && level != "restricted" {
			hint += fmt.Sprintf("; every pod of the release meets %s", level)
		}
		msg := fmt.Sprintf("the API server admits the %d %s (dry runs as %s), with %s:\n%s", sent, pluralWord(sent, what), who, plural(len(warned), "warning"), strings.Join(first(lines, 8), "\n"))
		return Warn("%s", withNotes(msg, notes)).WithHint(hint), nil
	}
	msg := fmt.Sprintf("the API server admits all %d %s (dry runs as %s)", sent, pluralWord(sent, what), who)
	if len(rbac) > 0 {
		msg += fmt.Sprintf("; not judged for lack of rights: %s", strings.Join(first(dedupe(sortedCopy(rbac)), 4), ", "))
	}
	return Pass("%s", withNotes(msg, notes)), nil
}

// namespaceNotes says what a run cannot judge when the release namespace
// does not exist yet (helm install --create-namespace creates it).
func namespaceNotes(p *admissionPlan) []string {
	if p.NamespaceExists {
		return nil
	}
	return []string{fmt.Sprintf("namespace %s does not exist yet: its Namespace and the cluster-scoped objects were dry-run; the namespaced objects and pods could not be (ResourceQuotas, LimitRanges, namespaced policies and webhooks' answers judged there are unknown); PodSecurity was evaluated here for the labels it will get; kubectl create namespace %s first gives the exact answer", p.Namespace, p.Namespace)}
}

func withNotes(msg string, notes []string) string {
	if len(notes) == 0 {
		return msg
	}
	return msg + "\n" + strings.Join(notes, "\n")
}

// pluralWord is "object the install creates" or "objects the install
// creates": the first word made plural for n other than 1.
func pluralWord(n int, phrase string) string {
	if n == 1 {
		return phrase
	}
	word, rest, _ := strings.Cut(phrase, " ")
	if rest != "" {
		rest = " " + rest
	}
	return word + "s" + rest
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
