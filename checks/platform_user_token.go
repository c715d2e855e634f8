package checks

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/platform"
)

// PlatformUserToken makes, from the workstation and before Helm starts, the
// platform calls the chart's validation hooks make with the user token
// (internal/platform: `cf helm validate`,
// https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go
// validateWithUserToken, checkRuntimeName, and `cf account validate-usage
// --fail-condition=reached --subject=clusters`,
// https://github.com/codefresh-io/cli-v2/blob/0b95f7dac6782eeae9b3e62f00bd189ada006ed0/cmd/commands/account.go
// runValidateLimits, ValidateGitOpsUsage), and
// fails where they would, quoting the hook's error: the token is refused
// (401), its user is not an account admin (`user "X" does not have Admin
// role in account "Y"`), its account is not global.codefresh.accountId
// (`account mismatch - ...`), the runtime name is taken (`runtime "X"
// already exists`), the account's cluster limit is reached (`clusters limit
// reached: usage=N, limit=M`, only when the validate-usage hook runs). It
// calls global.codefresh.url through the plugin's --connect-to and --ca-file,
// bounded by --request-timeout. It skips, with the reason, when the chart
// renders no validation hook, when the hook will run in runtime-token mode
// (leftover-runtime-token), when there is no token, and when the platform
// does not answer: never a pass it did not earn. The token (a plain value,
// or read from its secretKeyRef Secret as the hook reads it) is sent only
// to that URL and never appears in any output.
func PlatformUserToken() Check {
	return Check{
		Meta: Meta{
			ID:         "platform-user-token",
			Impact:     ImpactInstallFails,
			Category:   CategoryInputs,
			Modes:      ModePre | ModeUpgrade,
			Title:      "The user token passes the platform checks of the chart's validation hooks",
			Severity:   SeverityFail,
			Requires:   []string{"cluster-reachable"},
			ReadsChart: true,
			ReplayDiffers: "it sends the user token to the platform: a bundle masks the token, " +
				"so a replay judges the mask (***) where the live run sent the token",
		},
		Run: runPlatformUserToken,
	}
}

func runPlatformUserToken(ctx context.Context, env *Env) (Result, error) {
	in := env.Inputs
	validateValues, validateUsage, err := hooksCallingPlatform(ctx, env)
	if err != nil {
		return Result{}, err
	}
	if !validateValues && !validateUsage {
		return Skip("the chart renders no validation hook that runs here (installer.skipValidation and skipUsageValidation, or hooks of the install only): nothing calls the platform before the %s (validation-hooks)", helmOperation(env)), nil
	}
	if validateValues {
		sec, err := env.Cluster.Secret(in.Namespace, RuntimeTokenSecretName)
		if err != nil {
			return Result{}, err
		}
		if sec.Exists && sec.KeyLengths["token"] > 0 {
			return runtimeTokenMode(ctx, env)
		}
	}
	token, why, err := userToken(env)
	if err != nil {
		return Result{}, err
	}
	if token == "" {
		return Skip("%s: the platform checks need the user token (values)", why), nil
	}
	base, err := url.Parse(in.PlatformURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return Fail("global.codefresh.url %q is not a URL: the hook fails with \"global.codefresh.url\" must be a non-empty string", in.PlatformURL), nil
	}
	c := hookCalls{p: platform.New(env.Probe.Client(), base, token), in: in, token: token}
	where := fmt.Sprintf("%s, called from this workstation", in.PlatformURL)
	if validateValues {
		if r, err := c.validateValues(ctx); err != nil {
			return Skip("the platform did not answer (%s): %s", where, c.clean(err.Error())), nil
		} else if r != "" {
			return Fail("the hook's `cf helm validate` will fail: failed getting current user: %s (%s)", c.clean(r), where).
				WithHint("check global.codefresh.userToken: a valid Codefresh API key of an account admin (User Settings > API keys)"), nil
		}
	}
	if validateUsage && len(c.failures) == 0 {
		if err := c.validateUsage(ctx); err != nil {
			return Skip("the platform did not answer (%s): %s", where, c.clean(err.Error())), nil
		}
	}
	if len(c.failures) > 0 {
		return Fail("the chart's validation hook will fail: %s (%s)", strings.Join(c.failures, "; "), where).
			WithHint("use the API key of an admin of the account global.codefresh.accountId names, a runtime name not yet on the platform (global.runtime.name), or free a cluster of the account's limit"), nil
	}
	return Pass("the platform checks of the validation hooks pass: %s (%s)", strings.Join(c.ok, "; "), where), nil
}

// hooksCallingPlatform says which of the chart's validation hooks run
// before this install or upgrade and call the platform: validate-values
// (`cf helm validate`) and validate-usage (`cf account validate-usage`),
// as the chart renders them, else as the values say.
func hooksCallingPlatform(ctx context.Context, env *Env) (validateValues, validateUsage bool, err error) {
	in := env.Inputs
	c, err := readChartRules(ctx, env)
	if err != nil {
		return false, false, err
	}
	validateValues, validateUsage = !in.SkipValidation, !in.SkipUsageValidation
	if c.R != nil {
		validateValues, validateUsage = c.R.ValidationHooks.ValidateValues != nil, c.R.ValidationHooks.ValidateUsage
	}
	if env.Upgrading() && syncOf(ctx, env) == nil {
		// helm upgrade runs only the pre-upgrade hooks (validate-values);
		// Argo CD runs every pre-install and pre-upgrade hook on each sync.
		validateUsage = false
		if c.R != nil {
			validateValues = validateValues && c.R.ValidationHooks.ValidateValuesOnUpgrade
			validateUsage = c.R.ValidationHooks.ValidateUsage && c.R.ValidationHooks.ValidateUsageOnUpgrade
		}
	}
	return validateValues, validateUsage, nil
}

// hookCalls makes the validation hooks' platform calls with the user
// token, collecting the hooks' failures and what passed, in their words.
type hookCalls struct {
	p            *platform.Client
	in           Inputs
	token        string
	failures, ok []string
}

// clean takes the token out of s.
func (c *hookCalls) clean(s string) string { return strings.ReplaceAll(s, c.token, "<token>") }

// validateValues makes `cf helm validate`'s calls (validateWithUserToken,
// checkRuntimeName): the user is an admin of the account
// global.codefresh.accountId names, and the runtime name is free.
// refused is the platform's refusal of the first call; err no answer.
func (c *hookCalls) validateValues(ctx context.Context) (refused string, err error) {
	me, r, err := c.p.Me(ctx)
	if err != nil || r != "" {
		return r, err
	}
	acct := me.Account()
	if !me.Admin() {
		c.failures = append(c.failures, fmt.Sprintf("user %q does not have Admin role in account %q", me.Name, acct))
	}
	if c.in.AccountID != "" && me.ActiveAccount.ID != c.in.AccountID {
		c.failures = append(c.failures, fmt.Sprintf("account mismatch - userToken is for accountId %s (%q), while \"global.codefresh.accountId\" is %s", me.ActiveAccount.ID, acct, c.in.AccountID))
	}
	if len(c.failures) > 0 {
		return "", nil
	}
	c.ok = append(c.ok, fmt.Sprintf("user %s is Admin in account %s (%s)", me.Name, acct, me.ActiveAccount.ID))
	found, r, err := c.p.Runtime(ctx, c.in.RuntimeName)
	switch {
	case err != nil:
		return "", err
	case found:
		c.failures = append(c.failures, fmt.Sprintf("runtime %q already exists", c.in.RuntimeName))
	case r != "" && !strings.Contains(r, "does not exist"):
		c.failures = append(c.failures, "failed to get runtime: "+c.clean(r))
	default:
		c.ok = append(c.ok, fmt.Sprintf("runtime name %q is free", c.in.RuntimeName))
	}
	return "", nil
}

// validateUsage makes `cf account validate-usage
// --fail-condition=reached --subject=clusters`'s call (runValidateLimits,
// ValidateGitOpsUsage): the account's clusters usage is under its limit.
// err is no answer.
func (c *hookCalls) validateUsage(ctx context.Context) error {
	ls, r, err := c.p.Limits(ctx)
	switch {
	case err != nil:
		return err
	case r != "":
		c.failures = append(c.failures, "failed validating usage: failed to get limits status: "+c.clean(r))
	case ls.Limits == nil || ls.Limits.Clusters == nil:
		c.ok = append(c.ok, "no cluster limit on the account")
	case ls.Usage == nil || ls.Usage.Clusters == nil:
		c.failures = append(c.failures, "failed validating usage: usage validation error: clusters usage is missing")
	case *ls.Usage.Clusters >= *ls.Limits.Clusters:
		cond := "reached"
		if *ls.Usage.Clusters > *ls.Limits.Clusters {
			cond = "exceeded"
		}
		c.failures = append(c.failures, fmt.Sprintf("failed validating usage: usage validation error: clusters limit %s: usage=%d, limit=%d", cond, *ls.Usage.Clusters, *ls.Limits.Clusters))
	default:
		c.ok = append(c.ok, fmt.Sprintf("clusters usage %d of %d", *ls.Usage.Clusters, *ls.Limits.Clusters))
	}
	return nil
}

// userToken returns the user token as the hook reads it: the plain value,
// else the key of the secretKeyRef Secret in the runtime namespace. An empty
// token comes with why.
func userToken(env *Env) (token, why string, err error) {
	in := env.Inputs
	if in.UserToken != "" {
		return in.UserToken.Reveal(), "", nil
	}
	if in.UserTokenSecret == "" || in.UserTokenKey == "" {
		return "", "no global.codefresh.userToken (token or secretKeyRef)", nil
	}
	v, found, err := env.Cluster.SecretKey(in.Namespace, in.UserTokenSecret, in.UserTokenKey)
	if err != nil {
		return "", "", err
	}
	if !found || len(v) == 0 {
		return "", fmt.Sprintf("Secret %s/%s has no key %q", in.Namespace, in.UserTokenSecret, in.UserTokenKey), nil
	}
	return string(v), "", nil
}

// oneLineText is s on one line, cut at n runes.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// helmOperation names what the run checks: "install", "upgrade".
func helmOperation(env *Env) string {
	if env.Upgrading() {
		return "upgrade"
	}
	return "install"
}

// runtimeTokenMode judges the validate-values hook in runtime-token mode:
// with a codefresh-token Secret in the namespace, `cf helm validate` asks
// the platform for the runtime by name with that token and checks nothing
// else (https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go
// validateWithRuntimeToken): it fails with "failed getting runtime from
// platform" when the platform does not know the runtime or refuses the
// token.
func runtimeTokenMode(ctx context.Context, env *Env) (Result, error) {
	in := env.Inputs
	mode := fmt.Sprintf("Secret %s/%s holds a runtime token: the validate-values hook runs in runtime-token mode and only asks the platform for runtime %q with it (not the user token's Admin role, its account or a free runtime name)", in.Namespace, RuntimeTokenSecretName, in.RuntimeName)
	found, refused, where, err := askRuntimeWithToken(ctx, env)
	switch {
	case err != nil && where == "":
		return Result{}, err
	case err != nil:
		return Skip("%s; the platform did not answer (%s): %v", mode, where, err), nil
	case !found:
		return Fail("%s; the hook will fail with \"failed getting runtime from platform\": %s (%s)", mode, refused, where).
			WithHint(fmt.Sprintf("if runtime %q is gone from the platform, delete the leftover token before the %s (kubectl delete secret %s -n %s); if the runtime name is wrong, fix global.runtime.name", in.RuntimeName, helmOperation(env), RuntimeTokenSecretName, in.Namespace)), nil
	}
	return Pass("%s; the platform knows runtime %q (%s)", mode, in.RuntimeName, where), nil
}

// askRuntimeWithToken asks the platform (global.codefresh.url, through the
// plugin's --connect-to and --ca-file) for the runtime by name with the
// token of the namespace's codefresh-token Secret, as the hook does in
// runtime-token mode. found is whether the platform knows it; refused is
// the platform's words when it does not; where names the platform; err
// with where set is a platform that did not answer, without it a failure
// to read the token. The token never appears in what it returns.
func askRuntimeWithToken(ctx context.Context, env *Env) (found bool, refused, where string, err error) {
	in := env.Inputs
	v, ok, err := env.Cluster.SecretKey(in.Namespace, RuntimeTokenSecretName, "token")
	if err != nil {
		return false, "", "", err
	}
	if !ok || len(v) == 0 {
		return false, fmt.Sprintf("Secret %s/%s has no token", in.Namespace, RuntimeTokenSecretName), in.PlatformURL, nil
	}
	token := string(v)
	base, perr := url.Parse(in.PlatformURL)
	if perr != nil || base.Scheme == "" || base.Host == "" {
		return false, fmt.Sprintf("global.codefresh.url %q is not a URL", in.PlatformURL), in.PlatformURL, nil
	}
	where = fmt.Sprintf("%s, called from this workstation", in.PlatformURL)
	found, r, err := platform.New(env.Probe.Client(), base, token).Runtime(ctx, in.RuntimeName)
	clean := func(s string) string { return strings.ReplaceAll(s, token, "<token>") }
	if err != nil {
		return false, "", where, errors.New(clean(err.Error()))
	}
	if found {
		return true, "", where, nil
	}
	if r == "" {
		return false, fmt.Sprintf("runtime %q does not exist", in.RuntimeName), where, nil
	}
	return false, clean(r), where, nil
}
