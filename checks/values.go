package checks

import (
	"context"
	"fmt"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/chart"
	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/plan"
)

// reservedSecretName may not be used in a secretKeyRef: "codefresh-token is a
// reserved name and is not allowed" (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L2-L7).
const reservedSecretName = plan.TokenSecretName

// Values passes when the merged values hold what the chart's templates and
// its validate-values hook require for the planned access mode
// (https://github.com/codefresh-io/cli-v2/blob/v0.2.16/cmd/commands/helm.go "cf helm validate" and the render-time failures of https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl; https://codefresh.io/docs/docs/installation/gitops/hybrid-gitops-helm-installation/ "Validating values.yaml", Validated settings):
//   - global.codefresh.userToken: token, or a secretKeyRef whose Secret and
//     key exist, non-empty, in the runtime namespace; not named codefresh-token;
//   - tunnel mode (and codefreshWorkflowLogStoreCM.enabled, default true):
//     global.codefresh.accountId;
//   - ingress mode: hosts[0] a non-empty string, protocol http|https,
//     className non-empty;
//   - service-mesh mode: global.runtime.ingressUrl starting with http;
//   - global.runtime.gitCredentials.password.secretKeyRef: name and key, and
//     the Secret/key exists;
//   - warn on global.external-argo-cd, ignored since chart 0.24 (the chart's
//     README, "Upgrading", https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/README.md).
//
// Files that do not parse never reach this check: they are an input error
// (exit 2). No value of a token, password or key is ever printed.
func Values() Check {
	return Check{
		Meta: Meta{
			ID:       "values",
			Impact:   ImpactInstallFails,
			Category: CategoryInputs,
			Modes:    ModePre,
			Title:    "Values hold what the chart requires for the access mode",
			Severity: SeverityFail,
			Requires: []string{"cluster-reachable"},
			Applies:  Applies{Needs: []Input{InputValues}},
		},
		Run: runValues,
	}
}

func runValues(_ context.Context, env *Env) (Result, error) {
	v := env.Inputs.Values
	vp := &valueProblems{env: env}
	if err := vp.userToken(); err != nil {
		return Result{}, err
	}
	vp.accessMode()
	// gitCredentials (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl: both name and key, or rendering fails).
	if gref := plan.Map(v, "global.runtime.gitCredentials.password.secretKeyRef"); len(gref) > 0 {
		if err := vp.secretKeyRef("global.runtime.gitCredentials.password.secretKeyRef", gref); err != nil {
			return Result{}, err
		}
	}

	if len(vp.problems) > 0 {
		return Fail("%s", strings.Join(vp.problems, "; ")).WithHint(strings.Join(vp.hints, "; ")).WithObjects(vp.objs...).WithSource(vp.src), nil
	}
	if plan.Has(v, "global.external-argo-cd") {
		return Warn("global.external-argo-cd is set but the chart ignores it since 0.24 (renamed global.integrations.argo-cd)").
			WithHint("move its settings under global.integrations.argo-cd (server.svc, server.port, server.auth...)").
			WithSource(env.Source("global.external-argo-cd")), nil
	}
	return Pass("values hold what %s mode requires (userToken, %s)", env.Inputs.AccessMode, modeKeys(env.Inputs.AccessMode)), nil
}

// valueProblems gathers what the values check finds wrong: each problem,
// its hint, the objects it names and where the first problem a value
// causes is written.
type valueProblems struct {
	env             *Env
	problems, hints []string
	objs            []ObjectRef
	src             *Source
}

// add records problem p with hint h ("" for none), caused by the value at
// path when one is given.
func (vp *valueProblems) add(p, h string, path ...string) {
	vp.problems = append(vp.problems, p)
	if h != "" {
		vp.hints = append(vp.hints, h)
	}
	if vp.src == nil && len(path) > 0 {
		vp.src = vp.env.Source(path[0])
	}
}

// secretKeyRef records the problem of the secretKeyRef ref at path, if
// any (secretKeyRefProblem).
func (vp *valueProblems) secretKeyRef(path string, ref map[string]any) error {
	p, h, o, err := secretKeyRefProblem(vp.env, path, ref)
	if err != nil {
		return err
	}
	if p != "" {
		vp.add(p, h, path)
		vp.objs = append(vp.objs, o...)
	}
	return nil
}

// userToken judges global.codefresh.userToken: its token or its
// secretKeyRef is mandatory (https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl, https://github.com/codefresh-io/cli-v2/blob/v0.2.16/cmd/commands/helm.go).
func (vp *valueProblems) userToken() error {
	v := vp.env.Inputs.Values
	token := plan.String(v, "global.codefresh.userToken.token")
	ref := plan.Map(v, "global.codefresh.userToken.secretKeyRef")
	switch {
	case token != "":
	case len(ref) > 0:
		return vp.secretKeyRef("global.codefresh.userToken.secretKeyRef", ref)
	default:
		vp.add("global.codefresh.userToken is mandatory: set token or secretKeyRef",
			fmt.Sprintf("kubectl create secret generic cf-user-token -n %s --from-literal=token=<your Codefresh API key>, then --set global.codefresh.userToken.secretKeyRef.name=cf-user-token --set global.codefresh.userToken.secretKeyRef.key=token", vp.env.Inputs.Namespace))
	}
	return nil
}

// accessMode judges the values the access mode requires, and the account
// ID the workflow log store needs outside tunnel mode.
func (vp *valueProblems) accessMode() {
	env, v := vp.env, vp.env.Inputs.Values
	accountID := plan.String(v, "global.codefresh.accountId")
	switch env.Inputs.AccessMode {
	case AccessTunnel:
		if accountID == "" {
			vp.add("global.codefresh.accountId is required for tunnel based runtime", "--set global.codefresh.accountId=<account ID> (Codefresh UI: Account settings)")
		}
	case AccessIngress:
		hosts := plan.List(v, "global.runtime.ingress.hosts")
		if len(hosts) == 0 {
			vp.add(`"global.runtime.ingress.hosts" must contain the runtime host (the chart uses hosts[0])`, "--set global.runtime.ingress.hosts[0]=<runtime host> (or --ingress-host)")
		} else if h, ok := hosts[0].(string); !ok || h == "" {
			vp.add(`"global.runtime.ingress.hosts" values must be non-empty strings`, "", "global.runtime.ingress.hosts[0]")
		}
		if p := ingressProtocol(env); p != "http" && p != "https" {
			vp.add(fmt.Sprintf("global.runtime.ingress.protocol %q: only http and https are supported", p), "--set global.runtime.ingress.protocol=https", "global.runtime.ingress.protocol")
		}
		if env.Inputs.IngressClass == "" {
			vp.add(`"global.runtime.ingress.className" must be a non-empty string`, "--set global.runtime.ingress.className=<IngressClass> (or --ingress-class)", "global.runtime.ingress.className")
		}
	case AccessServiceMesh:
		u := env.Inputs.IngressURL
		switch {
		case u == "":
			vp.add("global.runtime.ingressUrl must be provided when ingress and tunnel-client are disabled", "--set global.runtime.ingressUrl=https://<runtime host> (or --ingress-url)")
		case !strings.HasPrefix(u, "http"):
			vp.add(fmt.Sprintf("global.runtime.ingressUrl %q: only http and https are supported", u), "", "global.runtime.ingressUrl")
		}
	}
	if env.Inputs.AccessMode != AccessTunnel && accountID == "" && plan.Bool(v, true, "codefreshWorkflowLogStoreCM.enabled") {
		vp.add("global.codefresh.accountId is required if codefreshWorkflowLogStoreCM is enabled (the default)", "--set global.codefresh.accountId=<account ID>")
	}
}

func modeKeys(m AccessMode) string {
	switch m {
	case AccessIngress:
		return "ingress hosts[0], className, protocol"
	case AccessServiceMesh:
		return "ingressUrl"
	default:
		return "accountId"
	}
}

// secretKeyRefProblem checks a {name, key} reference to a Secret in the
// runtime namespace. It returns "" when the reference is usable.
func secretKeyRefProblem(env *Env, path string, ref map[string]any) (string, string, []ObjectRef, error) {
	name, _ := ref["name"].(string)
	key, _ := ref["key"].(string)
	ns := env.Inputs.Namespace
	switch {
	case name == "":
		return fmt.Sprintf("%s must have a name field", path), "", nil, nil
	case key == "":
		return fmt.Sprintf("%s must have a key field", path), "", nil, nil
	case name == reservedSecretName:
		return fmt.Sprintf("%s.name: codefresh-token is a reserved name and is not allowed", path),
			"copy the token into a Secret with another name and point secretKeyRef.name at it", nil, nil
	}
	sec, err := env.Cluster.Secret(ns, name)
	if err != nil {
		return "", "", nil, err
	}
	obj := []ObjectRef{{Kind: "Secret", Namespace: ns, Name: name}}
	create := fmt.Sprintf("kubectl create secret generic %s -n %s --from-literal=%s=<value>", name, ns, key)
	switch n, ok := sec.KeyLengths[key]; {
	case !sec.Exists:
		return fmt.Sprintf("%s: Secret %s/%s does not exist", path, ns, name), create, obj, nil
	case !ok:
		return fmt.Sprintf("%s: Secret %s/%s has no key %q", path, ns, name, key), create, obj, nil
	case n == 0:
		return fmt.Sprintf("%s: Secret %s/%s key %q is empty", path, ns, name, key), create, obj, nil
	}
	return "", "", nil, nil
}

// targetPlanned is the plan of an --upgrade's target: Helm's computed values
// of the new revision (chart.Upgrade.TargetComputed: the target chart's
// defaults coalesced with the values Helm's upgrade action chose), derived as
// the plan derives the flags' values. Checks that judge the target read it
// here, never the raw tree.
func targetPlanned(u *chart.Upgrade) plan.Planned { return plan.Derive(u.TargetComputed) }
