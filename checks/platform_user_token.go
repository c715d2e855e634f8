package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The platform calls the chart's validation hooks make with the user token,
// as codefresh-io/go-sdk sends them (GraphQL POST to <url>/2.0/api/graphql,
// the token as the Authorization header): `cf helm validate`
// (https://github.com/codefresh-io/cli-v2/blob/b36dcf4b468989a9c4738f1dd2a67fb2517d4bc3/cmd/commands/helm.go
// validateWithUserToken, checkRuntimeName) and `cf account validate-usage
// --fail-condition=reached --subject=clusters`
// (https://github.com/codefresh-io/cli-v2/blob/0b95f7dac6782eeae9b3e62f00bd189ada006ed0/cmd/commands/account.go
// runValidateLimits, ValidateGitOpsUsage); the queries are go-sdk's
// (https://github.com/codefresh-io/go-sdk/blob/1774674c42dae8abe227e057a9bda04580b1bb0e/pkg/codefresh/internal/v2/user.go,
// .../v2/runtime.go; https://github.com/codefresh-io/go-sdk/blob/46b357344af2627c56d1ecbdd6b052e26ee26f21/pkg/graphql/payments.go).
const (
	platformGraphQLPath = "/2.0/api/graphql"
	queryMe             = `
query Me {
	me {
		id
		name
		email
		isAdmin
		accounts {
			id
			name
		}
		activeAccount {
			id
			name
			gitProvider
			gitApiUrl
			sharedConfigRepo
			admins
		}
	}
}`
	queryRuntime = `
query GetRuntime($name: String!) {
	runtime(name: $name) {
		metadata {
			name
			namespace
		}
	}
}`
	queryLimits = `
query LimitsStatus {
  limitsStatus {
    usage {
      clusters
      applications
    }
    limits {
      clusters
      applications
    }
    status
  }
}`
)

// PlatformUserToken makes, from the workstation and before Helm starts, the
// platform calls the chart's validation hooks make with the user token, and
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
	c, err := readChartRules(ctx, env)
	if err != nil {
		return Result{}, err
	}
	validateValues, validateUsage := !in.SkipValidation, !in.SkipUsageValidation
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
	p := &platform{client: env.Probe.Client(), url: base.JoinPath(platformGraphQLPath).String(), token: token}
	where := fmt.Sprintf("%s, called from this workstation", in.PlatformURL)
	clean := func(s string) string { return strings.ReplaceAll(s, token, "<token>") }

	var failures, ok []string
	if validateValues {
		var me struct {
			Name          string `json:"name"`
			IsAdmin       *bool  `json:"isAdmin"`
			ActiveAccount struct {
				ID   string  `json:"id"`
				Name *string `json:"name"`
			} `json:"activeAccount"`
		}
		if r, err := p.query(ctx, queryMe, nil, &me); err != nil {
			return Skip("the platform did not answer (%s): %s", where, clean(err.Error())), nil
		} else if r != "" {
			return Fail("the hook's `cf helm validate` will fail: failed getting current user: %s (%s)", clean(r), where).
				WithHint("check global.codefresh.userToken: a valid Codefresh API key of an account admin (User Settings > API keys)"), nil
		}
		acct := ""
		if me.ActiveAccount.Name != nil {
			acct = *me.ActiveAccount.Name
		}
		if me.IsAdmin == nil || !*me.IsAdmin {
			failures = append(failures, fmt.Sprintf("user %q does not have Admin role in account %q", me.Name, acct))
		}
		if in.AccountID != "" && me.ActiveAccount.ID != in.AccountID {
			failures = append(failures, fmt.Sprintf("account mismatch - userToken is for accountId %s (%q), while \"global.codefresh.accountId\" is %s", me.ActiveAccount.ID, acct, in.AccountID))
		}
		if len(failures) == 0 {
			ok = append(ok, fmt.Sprintf("user %s is Admin in account %s (%s)", me.Name, acct, me.ActiveAccount.ID))
			var rt struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			r, err := p.query(ctx, queryRuntime, map[string]any{"name": in.RuntimeName}, &rt)
			switch {
			case err != nil:
				return Skip("the platform did not answer (%s): %s", where, clean(err.Error())), nil
			case rt.Metadata.Name != "":
				failures = append(failures, fmt.Sprintf("runtime %q already exists", in.RuntimeName))
			case r != "" && !strings.Contains(r, "does not exist"):
				failures = append(failures, "failed to get runtime: "+clean(r))
			default:
				ok = append(ok, fmt.Sprintf("runtime name %q is free", in.RuntimeName))
			}
		}
	}
	if validateUsage && len(failures) == 0 {
		var ls struct {
			Usage  *struct{ Clusters *int } `json:"usage"`
			Limits *struct{ Clusters *int } `json:"limits"`
		}
		r, err := p.query(ctx, queryLimits, nil, &ls)
		switch {
		case err != nil:
			return Skip("the platform did not answer (%s): %s", where, clean(err.Error())), nil
		case r != "":
			failures = append(failures, "failed validating usage: failed to get limits status: "+clean(r))
		case ls.Limits == nil || ls.Limits.Clusters == nil:
			ok = append(ok, "no cluster limit on the account")
		case ls.Usage == nil || ls.Usage.Clusters == nil:
			failures = append(failures, "failed validating usage: usage validation error: clusters usage is missing")
		case *ls.Usage.Clusters >= *ls.Limits.Clusters:
			cond := "reached"
			if *ls.Usage.Clusters > *ls.Limits.Clusters {
				cond = "exceeded"
			}
			failures = append(failures, fmt.Sprintf("failed validating usage: usage validation error: clusters limit %s: usage=%d, limit=%d", cond, *ls.Usage.Clusters, *ls.Limits.Clusters))
		default:
			ok = append(ok, fmt.Sprintf("clusters usage %d of %d", *ls.Usage.Clusters, *ls.Limits.Clusters))
		}
	}
	if len(failures) > 0 {
		return Fail("the chart's validation hook will fail: %s (%s)", strings.Join(failures, "; "), where).
			WithHint("use the API key of an admin of the account global.codefresh.accountId names, a runtime name not yet on the platform (global.runtime.name), or free a cluster of the account's limit"), nil
	}
	return Pass("the platform checks of the validation hooks pass: %s (%s)", strings.Join(ok, "; "), where), nil
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

// platform is a GraphQL client of the Codefresh platform, as go-sdk's.
type platform struct {
	client     *http.Client
	url, token string
}

// query posts a GraphQL query and decodes the one data field into out. err
// is a transport error (no answer); refused is the platform's refusal in the
// words go-sdk gives it ("[401] - failed to make a GraphQL API request: ..."
// or the GraphQL errors), "" when it answered.
func (p *platform) query(ctx context.Context, q string, vars map[string]any, out any) (refused string, err error) {
	if vars == nil {
		vars = map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"query": q, "variables": vars})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", p.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", req.URL.Host)
	resp, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= 400 {
		return fmt.Sprintf("[%d] - failed to make a GraphQL API request: %s", resp.StatusCode, oneLineText(string(raw), 200)), nil
	}
	var wrapper struct {
		Data   map[string]json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &wrapper); err != nil {
		return fmt.Sprintf("failed to unmarshal response Body: %v", err), nil
	}
	for _, d := range wrapper.Data {
		if len(d) > 0 && string(d) != "null" {
			if err := json.Unmarshal(d, out); err != nil {
				return fmt.Sprintf("failed to unmarshal response Body: %v", err), nil
			}
		}
		break
	}
	if len(wrapper.Errors) > 0 {
		msgs := make([]string, len(wrapper.Errors))
		for i, e := range wrapper.Errors {
			msgs[i] = e.Message
		}
		return strings.Join(msgs, "; "), nil
	}
	return "", nil
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
	p := &platform{client: env.Probe.Client(), url: base.JoinPath(platformGraphQLPath).String(), token: token}
	clean := func(s string) string { return strings.ReplaceAll(s, token, "<token>") }
	var rt struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	r, err := p.query(ctx, queryRuntime, map[string]any{"name": in.RuntimeName}, &rt)
	if err != nil {
		return false, "", where, errors.New(clean(err.Error()))
	}
	if rt.Metadata.Name != "" {
		return true, "", where, nil
	}
	if r == "" {
		return false, fmt.Sprintf("runtime %q does not exist", in.RuntimeName), where, nil
	}
	return false, clean(r), where, nil
}
